"""Fencing of the writes a run makes outside nestedflow's own tables.

A conductor paused past its ZooKeeper session wakes up believing it still
owns its job. Stack and resource rows are fenced by compare-and-swap; these
tests cover the other two things it could write: the physical objects
(the "cloud" of the built-in types) and its TaskFlow journal.
"""

import contextlib
import uuid

import pytest
from taskflow.persistence import models as tf_models

from nestedflow import exceptions
from nestedflow.flows import journal, runner

pytestmark = pytest.mark.functional

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"x": {"type": "OS::Heat::TestResource"}}}


@pytest.fixture
def stack(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    yield stack
    # Other tests count every live object of the database.
    for obj in engine.store.live(stack.id):
        engine.store.delete(obj.id)


def _row(engine, stack):
    return engine.db.list_resources(stack.id)[0]


def test_physical_store_acts_only_for_the_lock_holder(engine, stack):
    store, db = engine.store, engine.db
    row = _row(engine, stack)
    db.lock_resource(row.id, "T/run-a")
    create = dict(stack_id=stack.id, resource_id=row.id, resource_name="x",
                  type_name="OS::Heat::TestResource", properties={})

    made = store.create("k1", fence=(row.id, "T/run-a"), **create)
    # The traversal's own runs (a token ending in "/") are accepted too.
    assert store.create("k1", fence=(row.id, "T/"), **create).id == made.id
    # Another run of the same traversal, another traversal: refused.
    for token in ("T/run-b", "U/", "U/run-a"):
        with pytest.raises(exceptions.ResourceLocked):
            store.create(f"k-{token}", fence=(row.id, token), **create)
        with pytest.raises(exceptions.ResourceLocked):
            store.update(made.id, "x", fence=(row.id, token), properties={"v": token})
        with pytest.raises(exceptions.ResourceLocked):
            store.delete(made.id, fence=(row.id, token), resource_name="x")
    store.update(made.id, "x", fence=(row.id, "T/run-a"), properties={"v": "a"})
    assert store.get(made.id).properties == {"v": "a"}

    # Once the lock is released nobody may act through it.
    db.release_lock(row.id, "T/run-a")
    with pytest.raises(exceptions.ResourceLocked):
        store.delete(made.id, fence=(row.id, "T/run-a"), resource_name="x")
    assert store.get(made.id) is not None
    assert [o.create_key for o in store.live(stack.id)].count("k1") == 1


def _save(backend, stack_id, traversal_id, run, owner):
    return journal.copy_forward(
        backend, stack_id, None, f"run {run}",
        runner.flow_meta(runner.FACTORY, {"stack_id": stack_id, "traversal_id": traversal_id,
                                          "action": "CREATE"}, run, owner))


def test_journal_of_a_fenced_run_takes_no_write(engine, stack):
    db = engine.db
    backend = db.taskflow_backend()
    traversal = db.get_stack(stack.id).current_traversal
    db.claim_traversal(stack.id, traversal, "c1:aaaa")
    first = journal.FencedBackend(backend, journal.owner_fence(db, stack.id, traversal,
                                                               "c1:aaaa"))
    detail = _save(first, stack.id, traversal, 1, "c1:aaaa")

    # Another conductor claims the traversal: the first run is fenced off...
    db.claim_traversal(stack.id, traversal, "c2:bbbb")
    second = journal.FencedBackend(backend, journal.owner_fence(db, stack.id, traversal,
                                                                "c2:bbbb"))
    detail.state = "REVERTING"
    with pytest.raises(journal.Fenced), contextlib.closing(first.get_connection()) as conn:
        conn.update_flow_details(detail)
    with pytest.raises(journal.Fenced):
        _save(first, stack.id, traversal, 9, "c1:aaaa")
    # ...while the new owner resumes from the latest run and journals its own.
    latest = journal.latest_detail(second, stack.id, traversal)
    assert latest.uuid == detail.uuid and latest.state != "REVERTING"
    atom = tf_models.TaskDetail("create x #1", str(uuid.uuid4()))
    atom.state = "SUCCESS"
    latest.add(atom)
    resumed = journal.copy_forward(second, stack.id, latest, "run 2", {
        **latest.meta, "run": 2, "owner": "c2:bbbb"})
    again = journal.latest_detail(second, stack.id, traversal)
    assert again.uuid == resumed.uuid
    assert [(a.name, a.state) for a in again] == [("create x #1", "SUCCESS")]
    assert [a.uuid for a in again] != [atom.uuid]  # a copy, not shared rows
    # The stack itself only answers to the new owner.
    with pytest.raises(exceptions.OwnershipLost):
        db.set_stack_state(stack.id, traversal, "CREATE", "FAILED", "late", owner="c1:aaaa")


def test_suspending_a_fenced_run_neither_raises_nor_writes(engine, stack):
    """A conductor waking from a pause suspends its runs (session lost) just
    as their journal starts refusing writes; TaskFlow's suspend() journals
    the SUSPENDING state, which must not take the conductor down."""
    import taskflow.engines
    from taskflow.patterns import linear_flow

    from nestedflow.conductor.service import _Run

    db = engine.db
    backend = db.taskflow_backend()
    traversal = db.get_stack(stack.id).current_traversal
    db.claim_traversal(stack.id, traversal, "c1:cccc")
    fenced = journal.FencedBackend(backend, journal.owner_fence(db, stack.id, traversal,
                                                                "c1:cccc"))
    detail = _save(fenced, stack.id, traversal, 1, "c1:cccc")
    flow = linear_flow.Flow("noop")
    tf_engine = taskflow.engines.load(flow, flow_detail=detail, backend=fenced)
    run = _Run(None, "c1:cccc", stack.id, traversal, "CREATE")
    assert run.attach(tf_engine) is True

    db.claim_traversal(stack.id, traversal, "c2:dddd")
    run.suspend()
    assert run.suspend_requested
    assert journal.latest_detail(backend, stack.id, traversal).state == detail.state
    # Still a suspend request for a run that has not attached its engine yet.
    late = _Run(None, "c1:eeee", stack.id, traversal, "CREATE")
    late.suspend()
    assert late.attach(tf_engine) is False
