"""Database-only waves (nestedflow.flows.tasks.waves), on every database.

The database-only resources of one dependency wave are created (updated,
deleted) by one task in one transaction, and everything users see stays
per resource: states and events, a failure attributed to its resource, an
exact rollback, a resumed run that redoes nothing finished, and fencing --
a run taken over or cancelled writes nothing of its wave.
"""

import contextlib

import pytest
import sqlalchemy as sa

from nestedflow import exceptions, states, testing
from nestedflow.dispatch import held
from nestedflow.flows import factories, runtime, tasks
from nestedflow.resources import test_resource, value
from nestedflow.resources.none import NoneResource
from nestedflow.resources.registry import ResourceRegistry

pytestmark = pytest.mark.functional


class Refusing(NoneResource):
    """Database-only; its create fails, as a plugin's validation may."""

    def create(self):
        raise ValueError("refused by the plugin")


TYPES = {"OS::Heat::None": NoneResource, "OS::Heat::Value": value.Value,
         "OS::Heat::TestResource": test_resource.TestResource, "Test::Refusing": Refusing}


class Crash(Exception):
    """The process dying in the middle of a wave's transaction: what is
    written of it is never committed. (An Exception: SQLAlchemy takes a
    BaseException for a dead connection, which the process would not reuse.)"""


@pytest.fixture
def engine(make_engine, db_url):
    return make_engine(db_url, registry=ResourceRegistry.for_testing(TYPES))


def _template(**resources):
    return {"heat_template_version": "2018-08-31", "resources": resources}


#: Two waves (a, b, c; then v, w) and what a real resource cuts off: ``t``
#: has its own task, and so has ``after``, which waits for it.
WAVES = _template(
    a={"type": "OS::Heat::None"}, b={"type": "OS::Heat::None"},
    c={"type": "OS::Heat::None"},
    v={"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "a"}}},
    w={"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "b"}}},
    t={"type": "OS::Heat::TestResource"},
    after={"type": "OS::Heat::None", "depends_on": ["t"]})


def _held_flow(engine, start, run="run-1"):
    """Store a traversal without running it; returns (stack id, traversal
    id, its waves by their members' names, the other resource tasks)."""
    engine._dispatcher = held.HeldDispatcher()
    start()
    stack_id, traversal_id, action = engine._dispatcher.held[-1]
    return (stack_id, traversal_id, *_flow(engine, stack_id, traversal_id, action, run))


def _flow(engine, stack_id, traversal_id, action, run):
    engine.db.claim_traversal(stack_id, traversal_id, run)
    with runtime.installed(engine.runtime, run):
        flow = factories.stack_traversal(stack_id, traversal_id, action)
    waves = {tuple(sorted(t.resource_names)): t for t in flow
             if isinstance(t, tasks.waves._Wave)}
    alone = {t.resource_name: t for t in flow if isinstance(t, tasks.ResourceTask)}
    return waves, alone


def _run(engine, task, traversal_id, run="run-1", **inputs):
    with runtime.installed(engine.runtime, run):
        task.pre_execute()
        try:
            return task.execute(traversal=traversal_id, **inputs)
        finally:
            task.post_execute()


def _rows(engine, stack_id):
    return {r.name: r for r in engine.db.list_all_resources(stack_id)}


def _events(engine, stack_id):
    """Resource name -> its events' (action, status), in order."""
    stack_name = engine.get_stack(stack_id).name
    found = {}
    for e in engine.list_events(stack_id):
        if e.resource_name and e.resource_name != stack_name:
            found.setdefault(e.resource_name, []).append((e.action, e.status))
    return found


@contextlib.contextmanager
def _commits(db):
    seen = []
    listener = lambda conn: seen.append(conn)  # noqa: E731
    sa.event.listen(db._engine, "commit", listener)
    try:
        yield seen
    finally:
        sa.event.remove(db._engine, "commit", listener)


CREATED = [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]
DELETED = [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE")]


def test_waves_are_cut_by_depth_and_never_wait_for_a_real_resource(engine, stack_name):
    _, _, waves, alone = _held_flow(engine, lambda: engine.create_stack(stack_name, WAVES))
    assert set(waves) == {("a", "b", "c"), ("v", "w")}
    assert set(alone) == {"t", "after"}
    # The second wave waits for the first one's symbols alone.
    assert set(waves[("v", "w")].requires) == {"traversal", "resource:a", "resource:b"}
    assert not set(waves[("a", "b", "c")].requires) - {"traversal"}


def test_a_wave_commits_once_with_per_resource_states_and_events(engine, stack_name):
    stack_id, traversal_id, waves, alone = _held_flow(
        engine, lambda: engine.create_stack(stack_name, WAVES))
    with _commits(engine.db) as seen:
        first = _run(engine, waves[("a", "b", "c")], traversal_id)
    assert len(seen) == 1
    rows = _rows(engine, stack_id)
    assert first == tuple(tasks.output_of(rows[n]) for n in ("a", "b", "c"))
    for name in "abc":
        assert (rows[name].action, rows[name].status, rows[name].engine_id) == (
            "CREATE", "COMPLETE", None)
        assert rows[name].traversal_id == traversal_id and rows[name].physical_id
    inputs = {f"resource:{n}": out for n, out in zip("abc", first, strict=True)}
    second = _run(engine, waves[("v", "w")], traversal_id, **inputs)
    rows = _rows(engine, stack_id)
    assert [out["row"] for out in second] == [rows["v"].id, rows["w"].id]
    assert rows["v"].properties_data["value"] == rows["a"].physical_id
    assert _events(engine, stack_id) == {n: CREATED for n in "abcvw"}
    # Run again (a resumed run whose journal lost the result): the same
    # results, nothing written.
    with _commits(engine.db) as seen:
        assert _run(engine, waves[("a", "b", "c")], traversal_id) == first
    assert seen == []
    assert _events(engine, stack_id) == {n: CREATED for n in "abcvw"}


def test_create_update_and_delete_end_to_end(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, WAVES).id, timeout=60)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")
    rows = _rows(engine, stack.id)
    assert _events(engine, stack.id) == {n: CREATED for n in rows}
    updated = _template(**{**WAVES["resources"],
                           "v": {"type": "OS::Heat::Value",
                                 "properties": {"value": "changed"}},
                           "d": {"type": "OS::Heat::None"}})
    stack = engine.wait(engine.update_stack(stack.id, updated).id, timeout=60)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    after = _rows(engine, stack.id)
    events = _events(engine, stack.id)
    assert events["v"] == CREATED + [("UPDATE", "IN_PROGRESS"), ("UPDATE", "COMPLETE")]
    assert after["v"].properties_data["value"] == "changed" and after["v"].id == rows["v"].id
    assert events["d"] == CREATED
    # Kept as they were: no event, the same row.
    assert events["a"] == CREATED and after["a"].physical_id == rows["a"].physical_id
    stack = engine.wait(engine.delete_stack(stack.id).id, timeout=60)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    assert _events(engine, stack.id) == {n: events[n] + DELETED for n in events}
    assert testing.physical_objects(engine, stack.id) == []


def test_a_crash_in_a_wave_leaves_nothing_and_the_resumed_run_redoes_nothing(
        engine, stack_name):
    stack_id, traversal_id, waves, _ = _held_flow(
        engine, lambda: engine.create_stack(stack_name, WAVES))
    first = _run(engine, waves[("a", "b", "c")], traversal_id)
    done = _rows(engine, stack_id)

    # The process dies in the second wave's transaction, its rows written
    # but not committed (the events' insert comes last).
    def die(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith("INSERT INTO EVENTS"):
            raise Crash("the process died")

    inputs = {f"resource:{n}": out for n, out in zip("abc", first, strict=True)}
    sa.event.listen(engine.db._engine, "before_cursor_execute", die)
    try:
        # (SQLAlchemy and oslo.db may wrap it.)
        with pytest.raises(Exception, match="the process died"):
            _run(engine, waves[("v", "w")], traversal_id, **inputs)
    finally:
        sa.event.remove(engine.db._engine, "before_cursor_execute", die)
    rows = _rows(engine, stack_id)
    for name in "vw":
        assert (rows[name].action, rows[name].engine_id) == ("INIT", None)
    assert set(_events(engine, stack_id)) == set("abc")

    # Another run resumes the traversal: its flow is built anew from the
    # rows; what finished is handed on, the rest done once.
    waves, _ = _flow(engine, stack_id, traversal_id, states.CREATE, "run-2")
    with _commits(engine.db) as seen:
        again = _run(engine, waves[("a", "b", "c")], traversal_id, run="run-2")
    assert seen == [] and again == first
    _run(engine, waves[("v", "w")], traversal_id, run="run-2", **inputs)
    rows = _rows(engine, stack_id)
    assert {n: rows[n].physical_id for n in "abc"} == {n: done[n].physical_id for n in "abc"}
    assert _events(engine, stack_id) == {n: CREATED for n in "abcvw"}


@pytest.mark.parametrize("rollback", [True, False], ids=["rollback", "no-rollback"])
def test_a_failure_in_a_wave_is_its_resources_and_rollback_is_exact(
        engine, stack_name, rollback):
    template = _template(
        a={"type": "OS::Heat::None"}, b={"type": "OS::Heat::None"},
        bad={"type": "Test::Refusing"},
        later={"type": "OS::Heat::None", "depends_on": ["bad"]},
        t={"type": "OS::Heat::TestResource"})
    stack = engine.create_stack(stack_name, template, disable_rollback=not rollback)
    stack = engine.wait(stack.id, timeout=60)
    events = _events(engine, stack.id)
    rows = _rows(engine, stack.id)
    assert "bad" in stack.status_reason and "refused by the plugin" in stack.status_reason
    assert events["bad"][:2] == [("CREATE", "IN_PROGRESS"), ("CREATE", "FAILED")]
    assert "refused by the plugin" in (rows["bad"].status_reason or "") or rollback
    assert "later" not in events  # never started, so never undone
    assert (rows["later"].action, rows["later"].engine_id) == ("INIT", None)
    if rollback:
        assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE")
        assert events["a"] == events["b"] == CREATED + DELETED
        assert events["bad"][2:] == DELETED
        assert testing.physical_objects(engine, stack.id) == []
    else:
        assert (stack.action, stack.status) == ("CREATE", "FAILED")
        assert events["a"] == events["b"] == CREATED
        assert (rows["bad"].action, rows["bad"].status) == ("CREATE", "FAILED")
    assert all(row.engine_id is None for row in rows.values())


def test_a_fenced_or_cancelled_wave_writes_nothing(engine, stack_name):
    stack_id, traversal_id, waves, _ = _held_flow(
        engine, lambda: engine.create_stack(stack_name, WAVES))
    wave = waves[("a", "b", "c")]
    # Another run claims the traversal (this one's session lapsed).
    engine.db.claim_traversal(stack_id, traversal_id, "run-2")
    with _commits(engine.db) as seen, pytest.raises(exceptions.TraversalSuperseded):
        _run(engine, wave, traversal_id)
    assert seen == []
    assert all(r.action == "INIT" and r.engine_id is None
               for r in _rows(engine, stack_id).values())
    assert _events(engine, stack_id) == {}
    # The database refuses the writes themselves, whatever the task believes.
    rows = list(_rows(engine, stack_id).values())[:2]
    plans = [(row, [{"action": "CREATE", "status": "COMPLETE", "engine_id": None}])
             for row in rows]
    assert engine.db.write_free_resources(plans, f"{traversal_id}/run-1", stack_id,
                                          traversal_id, owner="run-1", event="x") is None
    # Cancelled: the run that owns it writes nothing either.
    waves, _ = _flow(engine, stack_id, traversal_id, states.CREATE, "run-3")
    engine.db.request_cancel(stack_id, traversal_id, states.CANCEL_ROLLBACK)
    with pytest.raises(exceptions.Cancelled):
        _run(engine, waves[("a", "b", "c")], traversal_id, run="run-3")
    assert _events(engine, stack_id) == {}


def test_a_failed_update_wave_rolls_back_exactly(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, WAVES).id, timeout=60)
    before = _rows(engine, stack.id)
    created = _events(engine, stack.id)
    # One wave (nothing of it waits for anything now): a, b, c kept, v
    # updated in place, d added and bad failing.
    updated = _template(**{**WAVES["resources"],
                           "v": {"type": "OS::Heat::Value",
                                 "properties": {"value": "changed"}},
                           "d": {"type": "OS::Heat::None"},
                           "bad": {"type": "Test::Refusing"}})
    stack = engine.wait(engine.update_stack(stack.id, updated).id, timeout=60)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert "bad" in stack.status_reason and "refused by the plugin" in stack.status_reason
    events = _events(engine, stack.id)
    after = {name: row for name, row in _rows(engine, stack.id).items() if row.current}
    assert events["d"] == CREATED + DELETED
    assert events["bad"] == [("CREATE", "IN_PROGRESS"), ("CREATE", "FAILED")] + DELETED
    # v's update undone (its properties given back); nothing else touched.
    update = [("UPDATE", "IN_PROGRESS"), ("UPDATE", "COMPLETE")]
    assert events["v"] == created["v"] + update + update
    assert {n: events[n] for n in created if n != "v"} == {
        n: e for n, e in created.items() if n != "v"}
    assert set(after) == set(before)
    assert after["v"].properties_data == before["v"].properties_data
    assert all(row.engine_id is None for row in _rows(engine, stack.id).values())


def test_a_wave_with_a_row_written_since_goes_row_by_row(engine, stack_name):
    """All or nothing: one row written since the flow read it (another
    run's lock came and went) and the wave's transaction writes nothing;
    each row is then created the per-resource way, each once."""
    stack_id, traversal_id, waves, _ = _held_flow(
        engine, lambda: engine.create_stack(stack_name, WAVES))
    db = engine.db
    row = _rows(engine, stack_id)["b"]
    db.release_lock(db.lock_resource(row.id, "someone/else").id, "someone/else")
    with _commits(db) as seen:
        result = _run(engine, waves[("a", "b", "c")], traversal_id)
    assert len(seen) > 1  # row by row
    rows = _rows(engine, stack_id)
    assert result == tuple(tasks.output_of(rows[n]) for n in ("a", "b", "c"))
    assert _events(engine, stack_id) == {n: CREATED for n in "abc"}
    assert all(rows[n].engine_id is None for n in "abc")
