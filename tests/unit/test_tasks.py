"""Each task class of a traversal, run by hand on a real (SQLite) database.

A held dispatcher stores the traversal without running it; the test builds
the traversal's flow as a conductor would, then runs single tasks -- their
execute, a re-run of it (every task must be idempotent: a crash re-runs
it), and their revert -- and reads the rows and the stack they wrote.
"""

import pytest

from nestedflow import exceptions, states
from nestedflow.dispatch import held
from nestedflow.flows import factories, runtime, tasks
from nestedflow.resources.base import StoredObjectResource
from nestedflow.resources.test_resource import TestResource

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "one"}},
        "b": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_attr": ["a", "output"]}}},
    },
    "outputs": {"b_out": {"value": {"get_attr": ["b", "output"]}}},
}


@pytest.fixture
def engine(sqlite_engine):
    sqlite_engine._dispatcher = held.HeldDispatcher()
    return sqlite_engine


def _flow(engine, run="run-1"):
    """The flow of the traversal dispatched last, claimed by ``run``:
    (stack id, traversal id, the tasks by class name and resource name)."""
    stack_id, traversal_id, action = engine._dispatcher.held[-1]
    engine.db.claim_traversal(stack_id, traversal_id, run)
    with runtime.installed(engine.runtime, run):
        flow = factories.stack_traversal(stack_id, traversal_id, action)
    named = {}
    for task in flow:
        key = getattr(task, "resource_name", None) or type(task).__name__
        named[(type(task).__name__, key)] = task
    return stack_id, traversal_id, named


def _execute(task, **inputs):
    task.pre_execute()
    try:
        return task.execute(**inputs)
    finally:
        task.post_execute()


def _revert(task, **kwargs):
    task.pre_revert()
    try:
        return task.revert(**kwargs)
    finally:
        task.post_revert()


def _row(engine, stack_id, name):
    return next(r for r in engine.db.list_resources(stack_id) if r.name == name)


def _created(engine, stack_name):
    """A stack whose create ran task by task; returns (stack id, outputs)."""
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, named = _flow(engine)
    _execute(named[("BeginTraversal", "BeginTraversal")])
    a = _execute(named[("CreateResource", "a")], traversal=traversal_id)
    b = _execute(named[("CreateResource", "b")], traversal=traversal_id,
                 **{tasks.SYMBOL.format("a"): a})
    _execute(named[("CompleteTraversal", "CompleteTraversal")], traversal=traversal_id,
             **{tasks.SYMBOL.format("a"): a, tasks.SYMBOL.format("b"): b})
    return stack_id, {"a": a, "b": b}


def test_begin_traversal_checks_ownership_and_cancels(engine, stack_name):
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, named = _flow(engine)
    begin = named[("BeginTraversal", "BeginTraversal")]
    assert _execute(begin) == traversal_id
    # A cancel stops the traversal at its next check...
    engine.db.request_cancel(stack_id, traversal_id, states.CANCEL_ROLLBACK)
    with pytest.raises(exceptions.Cancelled):
        _execute(begin)
    # ...and another run's claim fences this one off.
    engine.db.claim_traversal(stack_id, traversal_id, "run-2")
    with pytest.raises(exceptions.TraversalSuperseded):
        _execute(begin)


def test_create_resource_creates_once_and_its_revert_deletes(engine, stack_name):
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, named = _flow(engine)
    create = named[("CreateResource", "a")]
    first = _execute(create, traversal=traversal_id)
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status, row.engine_id) == (states.CREATE, states.COMPLETE, None)
    assert first == tasks.output_of(row) and first["attrs"] == {"output": "one"}
    # A re-run after a crash hands the same result on, creating nothing new.
    assert _execute(create, traversal=traversal_id) == first
    assert len(engine.store.live(stack_id)) == 1
    _revert(create, traversal=traversal_id, result=first, flow_failures={})
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status) == (states.DELETE, states.COMPLETE)
    assert engine.store.live(stack_id) == []


def test_complete_traversal_settles_the_stack_with_its_outputs(engine, stack_name):
    stack_id, _ = _created(engine, stack_name)
    stack = engine.get_stack(stack_id)
    assert (stack.action, stack.status) == (states.CREATE, states.COMPLETE)
    assert stack.outputs == {"b_out": "one"}


def test_converge_resource_updates_in_place_and_its_revert_restores(engine, stack_name):
    stack_id, _ = _created(engine, stack_name)
    changed = {**TEMPLATE, "resources": {**TEMPLATE["resources"], "a": {
        "type": "OS::Heat::TestResource", "properties": {"value": "two"}}}}
    engine.update_stack(stack_id, changed)
    _, traversal_id, named = _flow(engine)
    converge = named[("ConvergeResource", "a")]
    before = _row(engine, stack_id, "a")
    result = _execute(converge, traversal=traversal_id)
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status, row.id) == (states.UPDATE, states.COMPLETE, before.id)
    assert row.properties_data["value"] == "two" and result["attrs"] == {"output": "two"}
    assert result["undo"] == {"updated": row.id, "previous": before.properties_data}
    # Re-run: the row says it is done; the undo comes from the row.
    assert _execute(converge, traversal=traversal_id)["undo"] == result["undo"]
    _revert(converge, traversal=traversal_id, result=result, flow_failures={})
    assert _row(engine, stack_id, "a").properties_data["value"] == "one"


def test_converge_resource_leaves_an_unchanged_resource_alone(engine, stack_name):
    stack_id, _ = _created(engine, stack_name)
    engine.update_stack(stack_id, TEMPLATE)
    _, traversal_id, named = _flow(engine)
    before = _row(engine, stack_id, "a")
    result = _execute(named[("ConvergeResource", "a")], traversal=traversal_id)
    row = _row(engine, stack_id, "a")
    assert result["undo"] is None and result["attrs"] == {"output": "one"}
    assert (row.action, row.status, row.engine_id) == (before.action, before.status, None)
    # No plugin action: no state but the create's was ever recorded.
    assert [(e.action, e.status) for e in engine.list_events(stack_id)
            if e.resource_name == "a"] == [(states.CREATE, states.IN_PROGRESS),
                                           (states.CREATE, states.COMPLETE)]


def test_cleanup_replaced_keeps_a_current_row(engine, stack_name):
    stack_id, _ = _created(engine, stack_name)
    engine.update_stack(stack_id, TEMPLATE)
    _, traversal_id, named = _flow(engine)
    assert _execute(named[("CleanupReplaced", "a")], traversal=traversal_id) is True
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status, row.current) == (states.CREATE, states.COMPLETE, True)


class _Crash(BaseException):
    """The process dying: no handler of the engine runs (they catch Exception)."""


def test_an_interrupted_create_replaced_on_resume_keeps_its_object_apart(
        engine, stack_name, monkeypatch):
    """An update adds ``c``; its create made the object, then the run died
    before recording it. The resumed run replaces ``c`` (its action did
    not finish, as Heat replaces a resource left IN_PROGRESS); the
    replacement creates under a key of its own, and the original's cleanup
    deletes what the interrupted create made -- not the replacement's
    object, which the original's key found when the replacement inherited it."""
    stack_id, _ = _created(engine, stack_name)
    added = {**TEMPLATE, "resources": {**TEMPLATE["resources"], "c": {
        "type": "OS::Heat::TestResource", "properties": {"value": "three"}}}}
    engine.update_stack(stack_id, added)
    _, traversal_id, named = _flow(engine)
    made = StoredObjectResource.create

    def create_then_die(plugin):
        made(plugin)
        raise _Crash()

    monkeypatch.setattr(TestResource, "create", create_then_die)
    converge = named[("ConvergeResource", "c")]
    converge.pre_execute()
    with pytest.raises(_Crash):
        converge.execute(traversal=traversal_id)
    monkeypatch.undo()
    original = _row(engine, stack_id, "c")
    assert (original.action, original.status, original.physical_id) == (
        states.CREATE, states.IN_PROGRESS, None)
    interrupted = {o.id for o in engine.store.live(stack_id) if o.resource_id == original.id}
    assert len(interrupted) == 1

    _, _, named = _flow(engine, run="run-2")
    result = _execute(named[("ConvergeResource", "c")], traversal=traversal_id)
    assert result["undo"]["replaced"] == original.id
    assert _execute(named[("CleanupReplaced", "c")], traversal=traversal_id) is True
    rows = {r.id: r for r in engine.db.list_all_resources(stack_id) if r.name == "c"}
    replacement = rows[result["undo"]["replacement"]]
    assert (rows[original.id].action, rows[original.id].status) == (
        states.DELETE, states.COMPLETE)
    assert (replacement.action, replacement.status, replacement.current) == (
        states.CREATE, states.COMPLETE, True)
    live = {o.resource_name: o for o in engine.store.live(stack_id)}
    assert sorted(live) == ["a", "b", "c"]
    assert live["c"].id == replacement.physical_id and live["c"].id not in interrupted
    assert live["c"].resource_id == replacement.id


def test_delete_resource_deletes_once(engine, stack_name):
    stack_id, _ = _created(engine, stack_name)
    engine.delete_stack(stack_id)
    _, traversal_id, named = _flow(engine)
    delete = named[("DeleteResource", "b")]
    assert _execute(delete, traversal=traversal_id) is True
    rows = {r.name: r for r in engine.db.list_all_resources(stack_id)}
    assert (rows["b"].action, rows["b"].status) == (states.DELETE, states.COMPLETE)
    assert [o.resource_name for o in engine.store.live(stack_id)] == ["a"]
    # Re-run: already gone, nothing to do.
    assert _execute(delete, traversal=traversal_id) is True


@pytest.mark.parametrize("action", [states.SUSPEND, states.RESUME, states.CHECK])
def test_resource_action_acts_once(engine, stack_name, action):
    stack_id, _ = _created(engine, stack_name)
    if action == states.RESUME:
        engine.suspend_stack(stack_id)
        _, traversal_id, named = _flow(engine)
        for name in ("b", "a"):
            _execute(named[("ResourceAction", name)], traversal=traversal_id)
        _execute(named[("CompleteTraversal", "CompleteTraversal")], traversal=traversal_id)
    {states.SUSPEND: engine.suspend_stack, states.RESUME: engine.resume_stack,
     states.CHECK: engine.check_stack}[action](stack_id)
    _, traversal_id, named = _flow(engine, run="run-2")
    task = named[("ResourceAction", "a")]
    assert _execute(task, traversal=traversal_id) is True
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status, row.engine_id) == (action, states.COMPLETE, None)
    key = row.atomic_key
    assert _execute(task, traversal=traversal_id) is True
    # Done by this traversal already: the re-run only took and gave back the lock.
    assert _row(engine, stack_id, "a").action == action
    assert _row(engine, stack_id, "a").atomic_key == key + 2
