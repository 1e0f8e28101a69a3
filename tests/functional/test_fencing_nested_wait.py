"""The wake-up from a nested stack's wait writes nothing once the run lost
its claim: its event ("nested stack ... CREATE_COMPLETE") is fenced like
every other write of a run -- checked in the transaction that inserts it,
the stack row locked until the commit (nestedflow.db.fencing).

The acceptance run saw it on three conductors, a conductor paused past its
ZooKeeper session while its parent waited on a nested stack: on waking it
wrote that event four seconds after another conductor owned the traversal.
Here the claim is taken over in the database (as the other conductor's
claim writes it) while the parent's run waits; the child then settles and
wakes it.
"""

import time

import sqlalchemy as sa

from nestedflow.db import models

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"child": {"type": "OS::Heat::Stack", "properties": {"template": {
        "heat_template_version": "2018-08-31",
        "resources": {"slow": {"type": "OS::Heat::TestResource",
                               "properties": {"wait_secs": 4}}}}}}},
}


def _wait_for(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_run_that_lost_its_claim_writes_no_event_when_its_child_settles(
        engine, stack_name):
    stack = engine.create_stack(stack_name, TEMPLATE)

    def child_running():
        children = engine.db.list_children(stack.id)
        return children and any(r.status == "IN_PROGRESS"
                                for r in engine.db.list_resources(children[0].id))

    _wait_for(child_running)
    (child,) = engine.db.list_children(stack.id)
    # Another run claims the parent's traversal.
    with engine.db.writer() as session:
        session.execute(sa.update(models.Stack).where(models.Stack.id == stack.id)
                        .values(traversal_owner="another-conductor/run"))
        last = session.scalar(sa.select(sa.func.max(models.Event.id)))
    _wait_for(lambda: engine.db.get_stack(child.id).status != "IN_PROGRESS")
    # The parent's run has woken (its resource write is refused as well).
    time.sleep(3)
    late = [(e.resource_name, e.action, e.status, e.status_reason)
            for e in engine.db.list_events(stack.id) if e.id > last]
    assert late == [], f"written after the claim was lost: {late}"
    parent = engine.db.get_stack(stack.id)
    assert parent.traversal_owner == "another-conductor/run"
    assert parent.status == "IN_PROGRESS"


def test_a_parent_run_that_lost_its_claim_cannot_make_or_change_children(engine, stack_name):
    """The nested stack a parent's run creates, updates, deletes or acts on
    is written in a transaction that first checks (and locks) the parent's
    ownership (nestedflow.db.fencing.check_run)."""
    import pytest

    from nestedflow import exceptions
    from nestedflow.stacks.children import ParentLink

    parent = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    row = engine.db.get_stack(parent.id)
    (child,) = engine.db.list_children(parent.id)
    stale = (parent.id, row.current_traversal, "a-run-that-was-paused")
    link = ParentLink(stack_id=parent.id, root_id=parent.id, resource_name="late", depth=0,
                      fence=stale)
    before = len(engine.list_stacks(show_nested=True))
    child_template = {"heat_template_version": "2018-08-31",
                      "resources": {"x": {"type": "OS::Heat::None"}}}
    with pytest.raises(exceptions.OwnershipLost):
        engine.stacks.create("late-child", child_template, parent=link,
                             stack_id="00000000-0000-4000-8000-000000000001")
    with pytest.raises(exceptions.OwnershipLost):
        engine.stacks.update(child.id, child_template, fence=stale)
    for call in (lambda: engine.stacks.delete(child.id, fence=stale),
                 lambda: engine.stacks.action(child.id, "CHECK", fence=stale)):
        with pytest.raises(exceptions.OwnershipLost):
            call()
    assert len(engine.list_stacks(show_nested=True)) == before
    assert engine.db.get_stack(child.id).current_traversal == child.current_traversal
