"""Partial re-runs (Engine.rerun) and stopping and continuing a create or
update (Engine.stop_stack / continue_stack), on real databases."""

import time

import pytest
import sqlalchemy as sa
from test_convergence_examples import dummy_waits

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.db import models

TEMPLATE = """
heat_template_version: 2016-10-14
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_resource: a}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_attr: [b, output]}}}
  d: {type: OS::Heat::TestResource, properties: {value: d}}
  e: {type: OS::Heat::TestResource, depends_on: a}
"""

# d is created last: when it fails, every other resource is complete.
LAST_FAILS = TEMPLATE.replace("  d: {type: OS::Heat::TestResource, properties: {value: d}}",
                              "  d: {type: OS::Heat::TestResource, depends_on: [c, e]}")


def ids(engine, stack_id):
    return {r.name: r.physical_id for r in engine.list_resources(stack_id)}


def touched(engine, stack_id):
    """When each live object was last changed (None: never since its create)."""
    return {o.resource_name: (o.id, o.updated_at) for o in engine.store.live(stack_id)}


def acted_on(engine, stack_id):
    """Resources with an event in the stack's current traversal."""
    traversal = engine.db.get_stack(stack_id).current_traversal
    return {e.resource_name for e in engine.db.list_events(stack_id)
            if e.traversal_id == traversal and e.resource_name}


def settle(engine, stack):
    return engine.wait(stack.id, timeout=90)


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_rerun_of_the_failed_resource_completes_the_stack_and_touches_nothing_else(
        engine, stack_name, server):
    """Rollback disabled; d's post-check fails (its service answers 500).
    Once the service is fixed, re-running d alone completes the stack."""
    server.statuses["/d"] = [500]
    environment = {"checks": {"d": [{"type": "http", "url": server.url("/d")}]}}
    stack = settle(engine, engine.create_stack(stack_name, LAST_FAILS,
                                               environment=environment, disable_rollback=True))
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.d: post-check 'http' of CREATE failed" in stack.status_reason
    before = touched(engine, stack.id)
    failed_object = before.pop("d")[0]
    assert ids(engine, stack.id)["d"] == failed_object  # the row kept the object it made

    server.statuses["/d"] = [200]
    stack = settle(engine, engine.rerun(stack.id, ["d"]))
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    after = touched(engine, stack.id)
    new_object = after.pop("d")[0]
    assert after == before  # same ids, not even updated
    assert new_object != failed_object and engine.store.get(failed_object) is None
    assert acted_on(engine, stack.id) == {"d"}
    assert [(c.resource_name, c.status) for c in engine.list_checks(stack.id)] == [
        ("d", "FAIL"), ("d", "PASS")]


def test_rerun_with_dependents_reruns_exactly_the_dependents(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, TEMPLATE))
    before = ids(engine, stack.id)
    stack = settle(engine, engine.rerun(stack.id, ["b"], with_dependents=True))
    assert stack.stack_status == "UPDATE_COMPLETE"
    assert acted_on(engine, stack.id) == {"b", "c"}
    assert ids(engine, stack.id) == before
    stack = settle(engine, engine.rerun(stack.id, ["c"], with_dependencies=True))
    assert acted_on(engine, stack.id) == {"a", "b", "c"}
    stack = settle(engine, engine.rerun(stack.id, ["a"], with_dependents=True))
    assert acted_on(engine, stack.id) == {"a", "b", "c", "e"}
    assert ids(engine, stack.id) == before


def test_rerun_of_a_failed_resource_with_dependents_needs_them_too(sqlite_engine, stack_name):
    engine = sqlite_engine
    with socket_listening() as port:
        pass  # closed again: b's pre-check fails
    environment = {"checks": {"b": [{"type": "tcp", "port": port, "phase": "pre"}]}}
    # b starts once every resource but its dependent c is complete.
    template = TEMPLATE.replace("properties: {value: {get_resource: a}}",
                                "depends_on: [d, e], properties: {value: {get_resource: a}}")
    stack = settle(engine, engine.create_stack(stack_name, template, environment=environment,
                                               disable_rollback=True))
    assert stack.stack_status == "CREATE_FAILED"
    assert "b" not in touched(engine, stack.id)  # the pre-check stopped it
    with socket_listening(port):
        stack = settle(engine, engine.rerun(stack.id, ["b"]))
        assert stack.stack_status == "UPDATE_FAILED"
        assert "not complete and not re-run: c (INIT_COMPLETE) (re-run" in stack.status_reason
        stack = settle(engine, engine.rerun(stack.id, ["b"], with_dependents=True))
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert sorted(touched(engine, stack.id)) == ["a", "b", "c", "d", "e"]


def test_checks_only_changes_nothing(sqlite_engine, stack_name, server):
    engine = sqlite_engine
    environment = {"checks": {"*": [{"type": "http", "url": server.url("/all")}]}}
    stack = settle(engine, engine.create_stack(stack_name, TEMPLATE, environment=environment))
    assert stack.stack_status == "CREATE_COMPLETE"
    before = touched(engine, stack.id)
    rows_before = [(r.name, r.action, r.status) for r in engine.list_resources(stack.id)]
    stack = settle(engine, engine.rerun(stack.id, ["a", "b"], checks_only=True))
    assert stack.stack_status == "CHECK_COMPLETE"
    server.statuses["/all"] = [503]
    stack = settle(engine, engine.rerun(stack.id, ["b"], checks_only=True,
                                        with_dependents=True))
    assert stack.stack_status == "CHECK_FAILED"
    assert "check failed: b (post-check 'http'" in stack.status_reason
    assert "(and 1 more)" in stack.status_reason  # c failed too
    assert touched(engine, stack.id) == before
    assert [(r.name, r.action, r.status) for r in engine.list_resources(stack.id)] == \
        rows_before
    latest = engine.list_checks(stack.id, latest=True)
    assert {(c.resource_name, c.status) for c in latest} == {
        ("a", "PASS"), ("b", "FAIL"), ("c", "FAIL"), ("d", "PASS"), ("e", "PASS")}


def test_rerun_recreates_a_resource_whose_object_is_gone(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, TEMPLATE))
    before = ids(engine, stack.id)
    engine.store.delete(before["d"])  # lost behind the engine's back
    stack = settle(engine, engine.rerun(stack.id, ["d"]))
    assert stack.stack_status == "UPDATE_COMPLETE"
    after = ids(engine, stack.id)
    assert after["d"] != before["d"] and engine.store.get(after["d"]) is not None
    assert {k: v for k, v in after.items() if k != "d"} == {
        k: v for k, v in before.items() if k != "d"}


def test_rerun_refuses_unknown_resources_and_busy_stacks(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, TEMPLATE))
    with pytest.raises(exceptions.ResourceNotFound, match="Resource nope not found"):
        engine.rerun(stack.id, ["nope"])
    slow = TEMPLATE.replace("value: d}", "value: d2, wait_secs: 5}")
    engine.update_stack(stack.id, slow)
    with pytest.raises(exceptions.ActionNotAllowed, match="UPDATE_IN_PROGRESS"):
        engine.rerun(stack.id, ["a"])
    engine.cancel_update(stack.id)
    settle(engine, stack)


def _all_objects(engine, stack_id):
    with engine.db.reader() as session:
        return list(session.scalars(sa.select(models.PhysicalObject).where(
            models.PhysicalObject.stack_id == stack_id)))


def _wait_for(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def slow_dummy():
    with dummy_waits(0.1, 0.3):
        yield


def dummies(count, in_place=""):
    return {"heat_template_version": "2016-10-14", "resources": {
        f"d{i:02d}": {"type": "OS::Heat::Dummy", "properties": {
            "name_len": 6, "update_in_place_prop": in_place}} for i in range(count)}}


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_create_of_50_dummies_stopped_midway_then_continued(engine, stack_name, slow_dummy):
    stack = engine.create_stack(stack_name, dummies(50))
    _wait_for(lambda: len(engine.store.live(stack.id)) >= 10)
    engine.stop_stack(stack.id)
    stopped = settle(engine, stack)
    assert stopped.stack_status == "CREATE_FAILED" and "cancelled" in stopped.status_reason
    rows = engine.list_resources(stack.id)
    done = {r.name for r in rows if (r.action, r.status) == ("CREATE", "COMPLETE")}
    assert 10 <= len(done) < 50
    # A safe point: every resource is either created or never started.
    assert {(r.action, r.status) for r in rows} <= {("CREATE", "COMPLETE"), ("INIT", "COMPLETE")}
    assert len(engine.store.live(stack.id)) == len(done)
    kept = {r.name: r.physical_id for r in rows if r.name in done}

    final = settle(engine, engine.continue_stack(stack.id))
    assert final.stack_status == "CREATE_COMPLETE", final.status_reason
    objects = _all_objects(engine, stack.id)
    # Each resource created once: 50 objects ever made, none deleted.
    assert len(objects) == 50 and all(o.deleted_at is None for o in objects)
    assert sorted(o.resource_name for o in objects) == sorted(dummies(50)["resources"])
    assert {n: p for n, p in ids(engine, stack.id).items() if n in kept} == kept
    creates = [e.resource_name for e in engine.list_events(stack.id)
               if e.action == "CREATE" and e.status == "COMPLETE" and e.resource_name != stack_name]
    assert sorted(creates) == sorted(dummies(50)["resources"])


def test_update_stopped_midway_then_continued(sqlite_engine, stack_name, slow_dummy):
    engine = sqlite_engine
    CONF.set_override("max_workers", 4, group="engine")
    try:
        stack = settle(engine, engine.create_stack(stack_name, dummies(20)))
        before = ids(engine, stack.id)
        engine.update_stack(stack.id, dummies(20, in_place="v2"))
        _wait_for(lambda: sum(o.updated_at is not None
                              for o in engine.store.live(stack.id)) >= 4)
        engine.stop_stack(stack.id)
        stopped = settle(engine, stack)
        assert stopped.stack_status == "UPDATE_FAILED"
        updated = sum(o.properties["update_in_place_prop"] == "v2"
                      for o in engine.store.live(stack.id))
        assert 4 <= updated < 20
        final = settle(engine, engine.continue_stack(stack.id))
    finally:
        CONF.clear_override("max_workers", group="engine")
    assert final.stack_status == "UPDATE_COMPLETE", final.status_reason
    assert ids(engine, stack.id) == before  # updated in place, each once
    assert all(o.properties["update_in_place_prop"] == "v2" for o in engine.store.live(stack.id))
    assert len(_all_objects(engine, stack.id)) == 20


def test_continue_refuses_a_stack_that_is_not_stopped(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, TEMPLATE))
    with pytest.raises(exceptions.ActionNotAllowed, match="CREATE_COMPLETE"):
        engine.continue_stack(stack.id)


class socket_listening:  # noqa: N801 (a context manager used like a function)
    """A TCP port that accepts connections while the block runs."""

    def __init__(self, port=0):
        import socket

        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen()

    def __enter__(self):
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


SLOW_D = TEMPLATE.replace("value: d}", "value: d, wait_secs: 1.5}")


def _rerun_recreating_d(engine, stack_name):
    """A re-run that takes a while: d's object is gone, so it is re-created."""
    stack = settle(engine, engine.create_stack(stack_name, SLOW_D))
    engine.store.delete(ids(engine, stack.id)["d"])
    traversal = engine.db.get_stack(engine.rerun(stack.id, ["d"]).id).current_traversal
    # Its replacement's create started (and waits 1.5 s).
    _wait_for(lambda: any(e.resource_name == "d" and (e.action, e.status) == (
        "CREATE", "IN_PROGRESS") and e.traversal_id == traversal
        for e in engine.db.list_events(stack.id)))
    return stack


def test_an_update_supersedes_a_rerun_in_progress(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = _rerun_recreating_d(engine, stack_name)
    changed = SLOW_D.replace("value: a}", "value: a2}")
    final = settle(engine, engine.update_stack(stack.id, changed))
    assert final.stack_status == "UPDATE_COMPLETE", final.status_reason
    live = {o.resource_name: o for o in engine.store.live(stack.id)}
    assert sorted(live) == ["a", "b", "c", "d", "e"]  # nothing leaked or lost
    assert live["a"].properties["value"] == "a2"


def test_cancel_stops_a_rerun_without_rolling_back(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = _rerun_recreating_d(engine, stack_name)
    engine.cancel_update(stack.id)
    final = settle(engine, stack)
    assert final.stack_status == "UPDATE_FAILED" and "cancelled" in final.status_reason
    # The re-run's replacement of d was not rolled back: the stack can go on.
    final = settle(engine, engine.rerun(stack.id, ["d"]))
    assert final.stack_status == "UPDATE_COMPLETE", final.status_reason
    assert sorted(o.resource_name for o in engine.store.live(stack.id)) == [
        "a", "b", "c", "d", "e"]
