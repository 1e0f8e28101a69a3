"""Suspend and resume act only on resources in a state they apply to, as
Heat's (heat/engine/resource.py ``Resource.resume``: allowed from
SUSPEND_COMPLETE, RESUME_FAILED and RESUME_COMPLETE, else "State
('CREATE', 'COMPLETE') invalid for resume"; ``Resource.suspend``: refused
after a DELETE or from any FAILED/IN_PROGRESS state but SUSPEND's). The
refused resource keeps its state (Heat raises before ``_do_action``) and
the stack ends <ACTION>_FAILED (heat/engine/stack.py ``stack_task``,
its reason naming the resource). A nested stack's resource is refused
before its child stack is asked."""

CHILD = {"heat_template_version": "2018-08-31",
         "resources": {"inner": {"type": "OS::Heat::Dummy"}}}


def _template(fail=False):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": {"type": "OS::Heat::Dummy"},
            "nested": {"type": "OS::Heat::Stack", "properties": {"template": CHILD}},
            "b": {"type": "OS::Heat::TestResource", "depends_on": ["a"],
                  "properties": {"fail": fail}},
        },
    }


def _states(engine, stack_id):
    return {(r.stack_name, r.name): (r.action, r.status, r.status_reason)
            for r in engine.list_resources(stack_id, nested_depth=2)}



def test_resume_of_a_stack_never_suspended_fails(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _template()).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE"
    stack = engine.wait(engine.resume_stack(stack.id).id, timeout=60)
    assert stack.stack_status == "RESUME_FAILED", stack.status_reason
    assert "State ('CREATE', 'COMPLETE') invalid for resume" in stack.status_reason
    # Nothing was resumed: every resource (the nested stack's too) is as created.
    assert {s[:2] for s in _states(engine, stack.id).values()} == {("CREATE", "COMPLETE")}

    # Suspended, it resumes; resumed again (Heat allows RESUME_COMPLETE and
    # RESUME_FAILED), it resumes again.
    assert engine.wait(engine.suspend_stack(stack.id).id, timeout=60).stack_status == (
        "SUSPEND_COMPLETE")
    for _ in range(2):
        stack = engine.wait(engine.resume_stack(stack.id).id, timeout=60)
        assert stack.stack_status == "RESUME_COMPLETE", stack.status_reason
    assert {s[:2] for s in _states(engine, stack.id).values()} == {("RESUME", "COMPLETE")}


def test_suspend_of_a_failed_stack_fails(engine, stack_name):
    created = engine.create_stack(stack_name, _template(fail=True), disable_rollback=True)
    stack = engine.wait(created.id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    stack = engine.wait(engine.suspend_stack(stack.id).id, timeout=60)
    assert stack.stack_status == "SUSPEND_FAILED", stack.status_reason
    assert "resources.b: State ('CREATE', 'FAILED') invalid for suspend" in (
        stack.status_reason)
    assert _states(engine, stack.id)[(stack_name, "b")][:2] == ("CREATE", "FAILED")
