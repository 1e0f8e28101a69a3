"""One resource of a Heat type through create, an in-place update, a
replacing update, delete, and a create rolled back: each step's states
(the resource's events) and attributes (the stack's outputs), for the
tests of Heat's own types (test_heat_types_*.py)."""

import dataclasses

FAIL_AFTER = {"type": "OS::Heat::TestResource", "depends_on": ["r"],
              "properties": {"fail": True}}


@dataclasses.dataclass
class Steps:
    """What a case observed: the resource's physical ids and events per step."""

    ids: dict
    events: dict
    outputs: dict


def template(resource, outputs, extra=None):
    resources = {"r": resource, **(extra or {})}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {name: {"value": value} for name, value in outputs.items()}}


def resource_events(engine, stack_id, name="r"):
    return [(e.action, e.status) for e in engine.list_events(stack_id)
            if e.resource_name == name]


def physical_id(engine, stack_id, name="r"):
    return next(r.physical_id for r in engine.list_resources(stack_id) if r.name == name)


def run(engine, stack_name, base, inplace, replace, outputs, replace_unhealthy=False):
    """create ``base``; update to ``inplace`` (same physical id), then to
    ``replace`` (a new one; with ``replace_unhealthy`` the resource is
    first marked unhealthy, for types none of whose properties replace);
    delete. Each step's events of ``r`` and outputs are returned."""
    steps = Steps({}, {}, {})

    def step(name, action):
        seen = len(resource_events(engine, stack.id))
        settled = engine.wait(action().id, timeout=120)
        steps.events[name] = resource_events(engine, stack.id)[seen:]
        steps.outputs[name] = settled.outputs
        return settled

    stack = engine.create_stack(stack_name, template(base, outputs))
    settled = engine.wait(stack.id, timeout=120)
    assert settled.stack_status == "CREATE_COMPLETE", settled.status_reason
    steps.events["create"] = resource_events(engine, stack.id)
    steps.outputs["create"] = settled.outputs
    steps.ids["create"] = physical_id(engine, stack.id)

    settled = step("inplace", lambda: engine.update_stack(stack.id, template(inplace, outputs)))
    assert settled.stack_status == "UPDATE_COMPLETE", settled.status_reason
    steps.ids["inplace"] = physical_id(engine, stack.id)

    if replace_unhealthy:
        engine.mark_resource_unhealthy(stack.id, "r", True, "replace it")
    settled = step("replace", lambda: engine.update_stack(stack.id, template(replace, outputs)))
    assert settled.stack_status == "UPDATE_COMPLETE", settled.status_reason
    steps.ids["replace"] = physical_id(engine, stack.id)

    settled = step("delete", lambda: engine.delete_stack(stack.id))
    assert settled.stack_status == "DELETE_COMPLETE", settled.status_reason
    return steps


def rollback(engine, stack_name, resource, outputs):
    """Create ``resource`` and, after it, a resource that fails: the stack
    rolls back. Returns (settled stack, r's events)."""
    stack = engine.create_stack(stack_name, template(resource, outputs, {"after": FAIL_AFTER}))
    settled = engine.wait(stack.id, timeout=120)
    return settled, resource_events(engine, stack.id)


CREATED = [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]
UPDATED = [("UPDATE", "IN_PROGRESS"), ("UPDATE", "COMPLETE")]
DELETED = [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE")]
#: Convergence's replacement: the new object first, the old one deleted
#: in the cleanup that follows (Heat's UpdateReplace, convergence).
REPLACED = CREATED + DELETED


def collapsed(events):
    """``events`` without repeats in a row: a nested-stack type also records
    its child stack's progress as an IN_PROGRESS event of its action."""
    return [event for index, event in enumerate(events)
            if index == 0 or events[index - 1] != event]
