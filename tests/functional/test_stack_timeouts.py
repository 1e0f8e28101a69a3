"""A stack's ``timeout`` (minutes) ends a create or update that runs past it.

Time is not waited for: each test stores the stack without running it
(HeldDispatcher), moves the traversal's start back by a minute less a few
seconds -- as if it had been running that long -- and then runs it.
"""

import datetime
import time

import pytest
import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import models
from nestedflow.dispatch import held

pytestmark = pytest.mark.functional

SLOW = {"heat_template_version": "2018-08-31",
        "resources": {"quick": {"type": "OS::Heat::TestResource"},
                      "slow": {"type": "OS::Heat::TestResource",
                               "properties": {"action_wait_secs": {"create": 120}},
                               "depends_on": ["quick"]}}}
LEFT = 3  # seconds of the minute left when the traversal starts running


def _held(engine):
    original, hold = engine._dispatcher, held.HeldDispatcher()
    engine._dispatcher = hold
    return original, hold


def _backdate(engine, stack_id, traversal_id):
    past = models.utcnow() - datetime.timedelta(seconds=60 - LEFT)
    with engine.db.writer() as session:
        session.execute(sa.update(models.Stack).where(models.Stack.id == stack_id)
                        .values(created_at=past))
        session.execute(sa.update(models.Event)
                        .where(models.Event.stack_id == stack_id,
                               models.Event.traversal_id == traversal_id)
                        .values(timestamp=past))


def _run_late(engine, original, hold):
    stack_id, traversal_id, action = hold.held[-1]
    _backdate(engine, stack_id, traversal_id)
    engine._dispatcher = original
    started = time.monotonic()
    original.dispatch(stack_id, traversal_id, action)
    stack = engine.wait(stack_id, timeout=60)
    return stack, time.monotonic() - started


def test_create_past_its_timeout_rolls_back(engine, stack_name):
    original, hold = _held(engine)
    stack_id = engine.create_stack(stack_name, SLOW, timeout=1).id
    stack, took = _run_late(engine, original, hold)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert "Stack CREATE timed out after 1 minute(s)" in stack.status_reason
    assert took < 30  # cut at the deadline, not after slow's 120 s
    assert engine.store.live(stack_id) == []


def test_create_past_its_timeout_without_rollback_fails(engine, stack_name):
    original, hold = _held(engine)
    stack_id = engine.create_stack(stack_name, SLOW, timeout=1, disable_rollback=True).id
    stack, _ = _run_late(engine, original, hold)
    assert (stack.action, stack.status) == ("CREATE", "FAILED"), stack.status_reason
    assert "timed out" in stack.status_reason
    # What finished in time is kept, as after any failed create without rollback.
    assert [o.resource_name for o in engine.store.live(stack_id)] == ["quick"]


def test_update_past_its_timeout_rolls_back_to_the_previous_template(engine, stack_name):
    first = {"heat_template_version": "2018-08-31",
             "resources": {"quick": {"type": "OS::Heat::TestResource"}}}
    stack = engine.wait(engine.create_stack(stack_name, first, timeout=1).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    original, hold = _held(engine)
    engine.update_stack(stack.id, SLOW)
    stack, took = _run_late(engine, original, hold)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert "Stack UPDATE timed out" in stack.status_reason
    assert took < 30
    assert [o.resource_name for o in engine.store.live(stack.id)] == ["quick"]


def test_a_parent_past_its_timeout_stops_waiting_and_removes_its_child(engine, stack_name):
    template = {"heat_template_version": "2018-08-31",
                "resources": {"child": {"type": "OS::Heat::Stack",
                                        "properties": {"template": SLOW, "timeout": 30}}}}
    original, hold = _held(engine)
    stack_id = engine.create_stack(stack_name, template, timeout=1).id
    stack, took = _run_late(engine, original, hold)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert "timed out" in stack.status_reason
    assert took < 30
    children = engine.db.list_children(stack_id)
    # The child's own timeout (30) was capped to what its parent had left.
    assert [child.timeout for child in children] == [1]
    for child in children:
        settled = engine.wait(child.id, timeout=60)
        assert (settled.action, settled.status) == ("DELETE", "COMPLETE")
        assert engine.store.live(child.id) == []


@pytest.mark.parametrize("timeout", [0, -5, 1.5, "10", True])
def test_a_bad_timeout_is_refused_before_anything_is_stored(engine, stack_name, timeout):
    with pytest.raises(exceptions.StackValidationFailed, match="^timeout: "):
        engine.create_stack(stack_name, SLOW, timeout=timeout)
    with pytest.raises(exceptions.StackNotFound):
        engine.get_stack(stack_name)
