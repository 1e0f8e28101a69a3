"""Convergence scenarios as data: templates, operations and overlaps.

The same scenario runs two ways:

* :class:`SimDriver` -- the deterministic simulation
  (:mod:`nestedflow.testing.stepped`): ``("until", "create b")`` steps the
  latest traversal until exactly that task finished, so the overlap is the
  same on every run; then every settled state is checked in full.
* :class:`ThreadedDriver` -- the normal embedded engine (TaskFlow's parallel
  engine, real threads) on SQLite, PostgreSQL or MariaDB. Every test
  resource is slowed down (``wait_secs``) so operations really overlap, and
  ``until`` polls the events for the task; only the final state is checked.

Operations: ``("create", T)``, ``("update", T, kwargs)``, ``("delete",)``,
``("cancel", rollback)``, ``("until", task)``, ``("settle",)`` and
``("expect", "UPDATE_COMPLETE", T | None | "tracked")`` where ``T`` names a
template the live objects must realize, ``None`` means nothing may be left,
and ``"tracked"`` only requires every object to be owned by a row.
"""

import dataclasses
import time
import uuid

import yaml

from nestedflow import exceptions
from nestedflow.resources.test_resource import TestResource
from scenario import expect

HEADER = "heat_template_version: '2016-10-14'\n"


def template(text):
    return yaml.safe_load(HEADER + text)


class SlowToRefuse(TestResource):
    """Finds out only after a while that it must be replaced (as a real cloud
    API may): the replacement row appears long after the action started."""

    @classmethod
    def needs_replace_with_prop_diff(cls, changed, new_properties, old_properties):
        return False  # not known before the update runs: see update()

    def update(self, new_properties, old_properties):
        self.context.sleep(5)
        if TestResource.needs_replace_with_prop_diff(set(), new_properties, old_properties):
            raise exceptions.UpdateReplace(self.name)
        return super().update(new_properties, old_properties)


SLOW_REFUSAL = {"OS::Heat::TestResource": TestResource, "Test::SlowToRefuse": SlowToRefuse}


@dataclasses.dataclass
class Scenario:
    name: str
    templates: dict
    ops: list

    def __str__(self):
        return self.name


def _t(**templates):
    return {label: template(text) for label, text in templates.items()}


ABCD = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
  d: {type: OS::Heat::TestResource, properties: {value: d1}}
outputs:
  b_value: {value: {get_attr: [b, output]}}
  c_ref: {value: {get_resource: c}}
"""

# a updated in place, b replaced, c removed, e added (needs the new b).
ABCD_CHANGED = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a2}}
  b:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [a, output]}, update_replace_value: r2}
  d: {type: OS::Heat::TestResource, properties: {value: d1}}
  e: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
outputs:
  b_value: {value: {get_attr: [b, output]}}
  e_ref: {value: {get_resource: e}}
"""

ABCD_THIRD = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a3, update_replace_value: r3}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
  e: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
  f: {type: OS::Heat::RandomString, properties: {length: 8}}
"""

FAILING = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a2}}
  b:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [a, output]}, update_replace_value: r2}
  d: {type: OS::Heat::TestResource, properties: {value: d1}}
  x: {type: OS::Heat::TestResource, properties: {value: x}}
  bad:
    type: OS::Heat::TestResource
    depends_on: [a, b, x]
    properties: {fail: true}
"""

INVERT_1 = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_resource: a}}}
"""
# The dependency is inverted and both are replaced.
INVERT_2 = """
resources:
  a:
    type: OS::Heat::TestResource
    properties: {value: {get_resource: b}, update_replace_value: r2}
  b: {type: OS::Heat::TestResource, properties: {value: b2, update_replace_value: r2}}
"""

RENAME_1 = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
"""
RENAME_2 = """
resources:
  a_renamed: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a_renamed, output]}}}
"""

CREATE_FAILS = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
  bad: {type: OS::Heat::TestResource, depends_on: [b], properties: {fail: true}}
  never: {type: OS::Heat::TestResource, depends_on: [bad]}
"""

# Found by the property test: a row whose object a rollback deleted kept
# that object's id, and the object created for it later was referenced by
# the old id.
NONE_REF = """
resources:
  a: {type: OS::Heat::None}
  b: {type: OS::Heat::TestResource, properties: {value: {list_join: [-, [x, {get_resource: a}]]}}}
outputs:
  a_ref: {value: {get_resource: a}}
"""
NONE_REF_CHANGED = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a}}
  bad: {type: OS::Heat::TestResource, depends_on: [a], properties: {fail: true}}
"""


def _rollback(kind, change):
    """T1 -> T2 where ``change`` happens and ``bad`` fails afterwards."""
    return Scenario(
        f"rollback of {kind}",
        _t(T1=ABCD, T2=change),
        [("create", "T1"), ("settle",), ("expect", "CREATE_COMPLETE", "T1"),
         ("update", "T2"), ("settle",), ("expect", "ROLLBACK_COMPLETE", "T1")],
    )


BAD = """
  bad: {type: OS::Heat::TestResource, depends_on: [%s], properties: {fail: true}}
"""

SCENARIOS = [
    Scenario("create", _t(T1=ABCD), [
        ("create", "T1"), ("settle",), ("expect", "CREATE_COMPLETE", "T1")]),
    Scenario("create then rollback", _t(T1=CREATE_FAILS), [
        ("create", "T1"), ("settle",), ("expect", "ROLLBACK_COMPLETE", None)]),
    Scenario("update adds, removes, replaces and updates in place", _t(T1=ABCD, T2=ABCD_CHANGED), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T2")]),
    Scenario("update with no change", _t(T1=ABCD), [
        ("create", "T1"), ("settle",), ("update", "T1"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T1")]),
    Scenario("replacement that inverts dependencies", _t(T1=INVERT_1, T2=INVERT_2), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T2")]),
    Scenario("rename a resource", _t(T1=RENAME_1, T2=RENAME_2), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T2")]),
    Scenario("update supersedes a create in progress", _t(T1=ABCD, T2=ABCD_CHANGED), [
        ("create", "T1"), ("until", "create b"), ("update", "T2"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T2")]),
    Scenario("second update before the first finished its cleanup",
             _t(T1=ABCD, T2=ABCD_CHANGED, T3=ABCD_THIRD), [
                 ("create", "T1"), ("settle",), ("update", "T2"), ("until", "delete c"),
                 ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    Scenario("second update while the first replaces", _t(T1=ABCD, T2=ABCD_CHANGED, T3=ABCD_THIRD),
             [("create", "T1"), ("settle",), ("update", "T2"), ("until", "update b"),
              ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    Scenario("three overlapping traversals", _t(T1=ABCD, T2=ABCD_CHANGED, T3=ABCD_THIRD), [
        ("create", "T1"), ("until", "create a"), ("update", "T2"), ("until", "update a"),
        ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    _rollback("an in-place update", ABCD.split("outputs:")[0].replace("value: a1", "value: a2")
              + BAD % "a"),
    _rollback("a replacement", ABCD.split("outputs:")[0].replace(
        "value: {get_attr: [a, output]}",
        "value: {get_attr: [a, output]}, update_replace_value: r2") + BAD % "b"),
    _rollback("an addition", ABCD.split("outputs:")[0]
              + "  x: {type: OS::Heat::TestResource, properties: {value: x}}\n" + BAD % "x"),
    _rollback("a removal", ABCD.split("outputs:")[0].replace(
        "  d: {type: OS::Heat::TestResource, properties: {value: d1}}\n", "") + BAD % "c"),
    _rollback("every kind at once", FAILING),
    Scenario("failed update without rollback, then converge",
             _t(T1=ABCD, T2=FAILING, T3=ABCD_THIRD), [
                 ("create", "T1"), ("settle",), ("update", "T2", {"disable_rollback": True}),
                 ("settle",), ("expect", "UPDATE_FAILED", "tracked"),
                 ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    Scenario("failed create without rollback, then update", _t(T1=CREATE_FAILS, T2=ABCD), [
        ("create", "T1", {"disable_rollback": True}), ("settle",),
        ("expect", "CREATE_FAILED", "tracked"),
        ("update", "T2"), ("settle",), ("expect", "UPDATE_COMPLETE", "T2")]),
    Scenario("delete while create in progress", _t(T1=ABCD), [
        ("create", "T1"), ("until", "create b"), ("delete",), ("settle",),
        ("expect", "DELETE_COMPLETE", None)]),
    Scenario("delete while update replaces", _t(T1=ABCD, T2=ABCD_CHANGED), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("until", "update b"), ("delete",),
        ("settle",), ("expect", "DELETE_COMPLETE", None)]),
    Scenario("cancel an update with rollback", _t(T1=ABCD, T2=ABCD_CHANGED), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("until", "update b"),
        ("cancel", True), ("settle",), ("expect", "ROLLBACK_COMPLETE", "T1")]),
    Scenario("cancel a create with rollback", _t(T1=ABCD), [
        ("create", "T1"), ("until", "create b"), ("cancel", True), ("settle",),
        ("expect", "ROLLBACK_COMPLETE", None)]),
    Scenario("cancel an update without rollback, then converge",
             _t(T1=ABCD, T2=ABCD_CHANGED, T3=ABCD_THIRD), [
                 ("create", "T1"), ("settle",), ("update", "T2"), ("until", "update b"),
                 ("cancel", False), ("settle",), ("expect", "UPDATE_FAILED", "tracked"),
                 ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    Scenario("failing update supersedes one in progress; rollback converges to it",
             _t(T1=ABCD, T2=ABCD_CHANGED, T3=FAILING), [
                 ("create", "T1"), ("settle",), ("update", "T2"), ("until", "update b"),
                 ("update", "T3"), ("settle",), ("expect", "ROLLBACK_COMPLETE", "T2")]),
    Scenario("rollback to a template that never worked fails honestly",
             _t(T1=CREATE_FAILS, T2=FAILING, T3=ABCD), [
                 ("create", "T1", {"disable_rollback": True}), ("settle",),
                 ("update", "T2", {"disable_rollback": False}), ("settle",),
                 ("expect", "ROLLBACK_FAILED", "tracked"),
                 ("update", "T3"), ("settle",), ("expect", "UPDATE_COMPLETE", "T3")]),
    Scenario("rollback converges to a create that never ran, types changed back",
             _t(T1=NONE_REF, T2=NONE_REF_CHANGED), [
                 ("create", "T1"), ("update", "T2"), ("settle",),
                 ("expect", "ROLLBACK_COMPLETE", "T1")]),
    Scenario("update after a rollback", _t(T1=ABCD, T2=FAILING, T3=ABCD_CHANGED), [
        ("create", "T1"), ("settle",), ("update", "T2"), ("settle",),
        ("expect", "ROLLBACK_COMPLETE", "T1"), ("update", "T3"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "T3"), ("delete",), ("settle",),
        ("expect", "DELETE_COMPLETE", None)]),
]


def by_name(name):
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(name)


class Driver:
    """Plays a scenario's operations and checks each ``expect``."""

    def __init__(self, engine):
        self.engine = engine
        self.stack_id = None
        self.template_ids = {}

    def play(self, scenario):
        for op in scenario.ops:
            getattr(self, "do_" + op[0])(scenario, *op[1:])

    def template_for(self, scenario, label):
        return scenario.templates[label]

    def do_create(self, scenario, label, kwargs=None):
        stack = self.engine.create_stack(f"s-{uuid.uuid4().hex[:8]}",
                                         self.template_for(scenario, label), **(kwargs or {}))
        self.stack_id = stack.id
        self.template_ids[label] = self.engine.db.get_stack(stack.id).raw_template_id

    def do_update(self, scenario, label, kwargs=None):
        self.engine.update_stack(self.stack_id, self.template_for(scenario, label),
                                 **(kwargs or {}))
        self.template_ids[label] = self.engine.db.get_stack(self.stack_id).raw_template_id

    def do_delete(self, scenario):
        self.engine.delete_stack(self.stack_id)

    def do_cancel(self, scenario, rollback):
        self.engine.cancel_update(self.stack_id, rollback=rollback)

    def do_expect(self, scenario, state, objects):
        stack = self.engine.get_stack(self.stack_id)
        assert f"{stack.action}_{stack.status}" == state, (
            f"{scenario}: stack {stack.action}_{stack.status} ({stack.status_reason}), "
            f"expected {state}")
        if objects is None:
            if state == "DELETE_COMPLETE":
                found = expect.deleted_problems(self.engine, self.stack_id)
            else:
                found = [f"left: {o.resource_name}" for o in self.engine.store.live(
                    self.stack_id)]
        elif objects == "tracked":
            found = expect.tracked_problems(self.engine, self.stack_id)
        else:
            found = expect.problems(self.engine, self.stack_id, self.template_ids[objects])
        assert not found, f"{scenario}: " + "\n".join(found)


class SimDriver(Driver):
    def __init__(self, sim):
        super().__init__(sim.engine)
        self.sim = sim

    def do_until(self, scenario, task):
        self.sim.run(self.sim.traversals[-1], until=task)

    def do_settle(self, scenario):
        self.sim.settle()


class ThreadedDriver(Driver):
    """The embedded parallel engine; overlaps come from slowed-down resources."""

    def __init__(self, engine, wait_secs=0.1, timeout=90):
        super().__init__(engine)
        self.wait_secs = wait_secs
        self.timeout = timeout

    def template_for(self, scenario, label):
        tmpl = yaml.safe_load(yaml.safe_dump(scenario.templates[label]))
        for res in tmpl["resources"].values():
            if res["type"] == "OS::Heat::TestResource":
                res.setdefault("properties", {})["wait_secs"] = self.wait_secs
        return tmpl

    def do_until(self, scenario, task):
        verb, name = task.split()[:2]
        actions = {"create": {"CREATE"}, "update": {"UPDATE", "CREATE"},
                   "cleanup": {"DELETE"}, "delete": {"DELETE"}}[verb]
        traversal = self.engine.db.get_stack(self.stack_id).current_traversal
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for event in self.engine.db.list_events(self.stack_id):
                if (event.traversal_id == traversal and event.resource_name == name
                        and event.action in actions and event.status == "COMPLETE"):
                    return
            if self.engine.get_stack(self.stack_id).status != "IN_PROGRESS":
                return
            time.sleep(0.02)
        raise AssertionError(f"{scenario}: {task} did not happen in {self.timeout}s")

    def do_settle(self, scenario):
        self.engine.wait(self.stack_id, timeout=self.timeout)
        # Superseded traversals may still be finishing actions in flight.
        deadline = time.monotonic() + self.timeout
        while self.engine.runtime._owners and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not self.engine.runtime._owners, f"{scenario}: traversals still running"
