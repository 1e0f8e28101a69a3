"""The convergence PoC's demonstrations (examples/convergence/) with
``OS::Heat::Dummy``, on the embedded engine with real threads.

The PoC's README lists what it demonstrates (create, update in place,
replace, failure) and what it still had to test: updates with no actual
change, a concurrent update, rollback with a concurrent update. Each is a
test here; the live physical objects are checked against the template the
stack ends on (tests/scenario/expect.py), and physical ids before and after.
"""

import contextlib
import pathlib

import pytest
from scenario import scenarios

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.template import loader

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "convergence"
NAMES = ("create", "update_in_place", "replace", "fail")


def example(name):
    # nestedflow's loader, as a user's file would be read: the version is a
    # string, not a date.
    return loader.load((EXAMPLES / f"{name}.yaml").read_text())


@contextlib.contextmanager
def dummy_waits(low, high):
    """Dummy actions wait ``low`` to ``high`` seconds meanwhile."""
    CONF.set_override("min_wait_secs", low, group="dummy")
    CONF.set_override("max_wait_secs", high, group="dummy")
    try:
        yield
    finally:
        CONF.clear_override("min_wait_secs", group="dummy")
        CONF.clear_override("max_wait_secs", group="dummy")


@pytest.fixture
def fast_dummy():
    """Dummy actions wait 50-200 ms instead of the PoC's 1-5 s."""
    with dummy_waits(0.05, 0.2):
        yield


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request):
    """SQLite and PostgreSQL only: the PoC's examples are slow by design."""
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")


@pytest.fixture
def poc(engine, fast_dummy):
    return PoC(engine)


class PoC(scenarios.ThreadedDriver):
    """Plays the examples by name; remembers physical ids along the way."""

    SCENARIO = scenarios.Scenario("convergence PoC", {n: example(n) for n in NAMES}, [])

    def create(self):
        self.do_create(self.SCENARIO, "create")

    def update(self, name):
        self.do_update(self.SCENARIO, name)

    def until(self, task):
        self.do_until(self.SCENARIO, task)

    def settle(self, state, realizes):
        self.do_settle(self.SCENARIO)
        self.do_expect(self.SCENARIO, state, realizes)

    def ids(self):
        return {r.name: r.physical_id for r in self.engine.list_resources(self.stack_id)}

    def objects(self):
        return {o.resource_name: o for o in self.engine.store.live(self.stack_id)}

    def resource_events(self, traversal_id):
        return [(e.resource_name, e.action, e.status)
                for e in self.engine.db.list_events(self.stack_id)
                if e.traversal_id == traversal_id and e.resource_name]

    def traversal(self):
        return self.engine.db.get_stack(self.stack_id).current_traversal


def test_create(poc):
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    objects = poc.objects()
    assert sorted(objects) == ["dummy1", "dummy2", "dummy3"]
    name = objects["dummy1"].data["name"]
    assert len(name) == 8
    # dummy2 got dummy1's random name through get_attr.
    assert objects["dummy2"].properties["update_in_place_prop"] == name
    stack = poc.engine.get_stack(poc.stack_id)
    assert stack.outputs == {"dummy1_name": name, "dummy2_id": poc.ids()["dummy2"]}
    assert {r.type for r in poc.engine.list_resources(poc.stack_id)} == {
        "OS::Heat::Dummy", "Dummy"}


def test_update_in_place_keeps_every_physical_id(poc):
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    before = poc.ids()
    poc.update("update_in_place")
    traversal = poc.traversal()
    poc.settle("UPDATE_COMPLETE", "update_in_place")
    assert poc.ids() == before
    assert poc.objects()["dummy3"].properties["update_in_place_prop"] == "changed-in-place"
    assert poc.resource_events(traversal) == [("dummy3", "UPDATE", "IN_PROGRESS"),
                                              ("dummy3", "UPDATE", "COMPLETE")]


def test_replace_makes_a_new_object_and_updates_its_dependent_in_place(poc):
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    before = poc.ids()
    old_name = poc.objects()["dummy1"].data["name"]
    poc.update("replace")
    poc.settle("UPDATE_COMPLETE", "replace")
    after = poc.ids()
    assert after["dummy1"] != before["dummy1"]
    assert poc.engine.store.get(before["dummy1"]) is None  # the old one was cleaned up
    assert (after["dummy2"], after["dummy3"]) == (before["dummy2"], before["dummy3"])
    objects = poc.objects()
    new_name = objects["dummy1"].data["name"]
    assert len(new_name) == 12 and new_name != old_name
    assert objects["dummy2"].properties["update_in_place_prop"] == new_name


def test_failure_rolls_back_to_the_previous_template(poc):
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    before = poc.ids()
    poc.update("fail")
    poc.settle("ROLLBACK_COMPLETE", "create")
    assert poc.ids() == before
    stack = poc.engine.get_stack(poc.stack_id)
    assert "dummy4" in stack.status_reason and "fail_prop" in stack.status_reason


def test_failed_create_names_the_dummy(poc):
    poc.do_create(poc.SCENARIO, "fail", {"disable_rollback": True})
    poc.do_settle(poc.SCENARIO)
    stack = poc.engine.get_stack(poc.stack_id)
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.dummy4: Dummy dummy4 failed on create" in stack.status_reason


def test_update_with_no_actual_change_touches_nothing(poc):
    """The PoC's TODO "Handle updates with no actual resource updates in it"."""
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    before_ids = poc.ids()
    before = {name: obj.updated_at for name, obj in poc.objects().items()}
    poc.update("create")
    traversal = poc.traversal()
    poc.settle("UPDATE_COMPLETE", "create")
    assert poc.ids() == before_ids
    assert {name: obj.updated_at for name, obj in poc.objects().items()} == before
    # No resource action at all: no resource event in the update.
    assert poc.resource_events(traversal) == []


def test_second_update_while_the_first_is_in_progress(poc):
    """The PoC's TODO "Test concurrent update": the second update takes over
    from the first mid-way and the stack ends as the second says, with
    nothing leaked or created twice."""
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    before = poc.ids()
    poc.update("replace")
    poc.until("update dummy1")  # the replacement of dummy1 exists
    poc.update("update_in_place")
    poc.settle("UPDATE_COMPLETE", "update_in_place")
    after = poc.ids()
    # name_len went back to 8: dummy1 replaced once more; dummy3 in place.
    assert after["dummy1"] not in (before["dummy1"], None)
    assert after["dummy3"] == before["dummy3"]
    assert len(poc.objects()) == 3


def test_rollback_while_a_concurrent_update_is_in_flight(poc):
    """The PoC's TODO "Test rollback with concurrent update": a failing update
    supersedes one in flight; its rollback converges to the template of the
    update it superseded (Heat's convergence rolls back to the previous
    template, which is that one)."""
    poc.create()
    poc.settle("CREATE_COMPLETE", "create")
    poc.update("replace")
    poc.until("update dummy1")
    poc.update("fail")
    poc.settle("ROLLBACK_COMPLETE", "replace")
    assert len(poc.objects()) == 3
    assert len(poc.objects()["dummy1"].data["name"]) == 12


def test_dummy_waits_as_configured(engine, stack_name):
    """The PoC's 1-5 s by default; the range is the [dummy] options."""
    assert (CONF.dummy.min_wait_secs, CONF.dummy.max_wait_secs) == (1.0, 5.0)
    with dummy_waits(0.3, 0.3):
        stack = engine.create_stack(stack_name, {
            "heat_template_version": "2013-05-23",
            "resources": {"d": {"type": "Dummy", "properties": {"name_len": 3,
                                                                  "sequence": "digits"}}}})
        stack = engine.wait(stack.id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE"
    events = [e for e in engine.list_events(stack.id) if e.resource_name == "d"]
    assert (events[-1].timestamp - events[0].timestamp).total_seconds() >= 0.3
    (obj,) = engine.store.live(stack.id)
    assert obj.data["name"].isdigit() and len(obj.data["name"]) == 3


def test_dummy_rejects_a_name_length_out_of_range(engine, stack_name):
    with pytest.raises(exceptions.StackValidationFailed, match="name_len"):
        engine.create_stack(stack_name, {
            "heat_template_version": "2013-05-23",
            "resources": {"d": {"type": "OS::Heat::Dummy", "properties": {"name_len": 0}}}})
