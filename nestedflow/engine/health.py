"""Marking a resource unhealthy (Heat's ``resource mark unhealthy``).

As Heat's ``EngineService.resource_mark_unhealthy`` (heat/engine/service.py)
and ``Resource.state_set`` under convergence: the resource becomes
``CHECK_FAILED`` with the reason given, and the next update replaces it
(the converge task replaces any resource whose last action did not
complete: :func:`nestedflow.stacks.changes.decide`). Unmarking makes it
``CHECK_COMPLETE`` again.
"""


from nestedflow import exceptions, states
from nestedflow.db.owners import OwnerToken


def mark_resource_unhealthy(db, stacks, stack_id, resource_name, mark_unhealthy=True,
                            resource_status_reason=""):
    stack = stacks.live_stack(stack_id)
    row = next((r for r in db.list_resources(stack.id) if r.name == resource_name), None)
    if row is None:
        raise exceptions.ResourceNotFound(stack.name, resource_name)
    if row.status == states.IN_PROGRESS:
        raise exceptions.ActionNotAllowed(
            f"resource {resource_name} is {row.action}_IN_PROGRESS; mark it once it settles")
    if not mark_unhealthy and (row.action, row.status) != (states.CHECK, states.FAILED):
        return  # Heat: unmarking a resource that is not marked changes nothing
    holder = OwnerToken.holder("mark-unhealthy")
    try:
        row = db.lock_resource(row.id, holder)
    except exceptions.ResourceLocked as error:
        raise exceptions.ActionNotAllowed(
            f"resource {resource_name} is being acted on; mark it once it settles") from error
    status = states.FAILED if mark_unhealthy else states.COMPLETE
    reason = resource_status_reason or ("Marked unhealthy" if mark_unhealthy
                                        else "Marked healthy")
    db.update_resource(row, holder, event="mark-unhealthy", release=True,
                       action=states.CHECK, status=status, status_reason=reason)
