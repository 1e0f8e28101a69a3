"""Stack-level states and events as Heat's convergence records them.

Heat's ``Stack.converge_stack`` (heat/engine/stack.py) stores "Stack
<ACTION> started" with an event for every action, create included, and
``Stack.rollback`` converges with the action ROLLBACK: while a failed create
or update is being put back the stack says ROLLBACK_IN_PROGRESS.
"""

TEMPLATE = "2018-08-31"


def stack_events(engine, stack_id):
    return [(e.action, e.status, e.status_reason) for e in engine.db.list_events(stack_id)
            if e.resource_name is None]


def _failing(fail):
    return {"heat_template_version": TEMPLATE, "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
        "b": {"type": "OS::Heat::TestResource", "depends_on": "a",
              "properties": {"fail": fail}}}}


def test_a_create_has_its_started_event(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _failing(False)).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE"
    assert stack_events(engine, stack.id) == [
        ("CREATE", "IN_PROGRESS", "Stack CREATE started"),
        ("CREATE", "COMPLETE", "Stack CREATE completed successfully")]
    for action, method in (("SUSPEND", engine.suspend_stack), ("RESUME", engine.resume_stack),
                           ("CHECK", engine.check_stack), ("DELETE", engine.delete_stack)):
        engine.wait(method(stack.id).id, timeout=60)
        assert stack_events(engine, stack.id)[-2:] == [
            (action, "IN_PROGRESS", f"Stack {action} started"),
            (action, "COMPLETE", f"Stack {action} completed successfully")]


def test_a_failed_create_says_rollback_in_progress_while_rolling_back(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _failing(True)).id, timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    events = stack_events(engine, stack.id)
    assert events[:2] == [("CREATE", "IN_PROGRESS", "Stack CREATE started"),
                          ("ROLLBACK", "IN_PROGRESS", "Stack ROLLBACK started")]
    assert [e[:2] for e in events[2:]] == [("ROLLBACK", "COMPLETE")]
    # The rollback's deletes come after it started.
    ordered = [(e.resource_name, e.action, e.status) for e in engine.db.list_events(stack.id)]
    started = ordered.index((None, "ROLLBACK", "IN_PROGRESS"))
    assert ordered.index(("a", "DELETE", "COMPLETE")) > started


def test_a_failed_update_says_rollback_in_progress(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _failing(False)).id, timeout=60)
    stack = engine.wait(engine.update_stack(stack.id, _failing(True)).id, timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    events = [e[:2] for e in stack_events(engine, stack.id)]
    assert events[2:] == [("UPDATE", "IN_PROGRESS"), ("ROLLBACK", "IN_PROGRESS"),
                          ("ROLLBACK", "COMPLETE")]


def test_no_rollback_state_without_rollback(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _failing(True),
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    assert [e[:2] for e in stack_events(engine, stack.id)] == [
        ("CREATE", "IN_PROGRESS"), ("CREATE", "FAILED")]
