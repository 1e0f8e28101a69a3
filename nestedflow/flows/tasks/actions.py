"""Suspend, resume and check: one action per resource, nothing to undo."""

from nestedflow import exceptions, states
from nestedflow.flows.tasks.base import ResourceTask, is_gone

#: The states resume applies to (heat/engine/resource.py Resource.resume).
_RESUMABLE = ((states.SUSPEND, states.COMPLETE), (states.RESUME, states.FAILED),
              (states.RESUME, states.COMPLETE))


def refusal(action, row):
    """InvalidResourceState if ``action`` does not apply to ``row``'s state,
    as Heat's Resource.suspend and Resource.resume refuse; else None.
    (Check applies to any state a resource row can have.)"""
    state = (row.action, row.status)
    if action == states.RESUME and state not in _RESUMABLE:
        return exceptions.InvalidResourceState(action, state)
    if action == states.SUSPEND and (row.action == states.DELETE or (
            row.action != states.SUSPEND and row.status != states.COMPLETE)):
        return exceptions.InvalidResourceState(action, state)
    return None


class ResourceAction(ResourceTask):
    """Suspend, resume or check one resource (no revert: nothing to undo)."""

    def __init__(self, scope, row, action, after_ids):
        self.ACTION = action
        super().__init__(scope, row, requires=[f"done:{i}" for i in after_ids],
                         provides=f"done:{row.id}")

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = scope.lock(self.row_id)
        if is_gone(row):
            scope.release(row)
            return True
        if row.traversal_id == scope.traversal_id and (row.action, row.status) == (
                self.ACTION, states.COMPLETE):
            scope.release(row)
            return True
        # This traversal's own row in progress is a re-run after a crash.
        refused = None if row.traversal_id == scope.traversal_id else refusal(self.ACTION, row)
        if refused is not None:
            # As Heat: refused before the action starts, the resource keeps
            # its state and the stack fails ("Resource RESUME failed: ...").
            scope.release(row)
            raise exceptions.ResourceFailure(row.name, self.ACTION, refused) from refused
        row = scope.set_state(row, self.ACTION, states.IN_PROGRESS, "state changed",
                              traversal_id=scope.traversal_id)
        plugin = scope.plugin(row, row.properties_data or {})
        try:
            scope.checks.before(plugin, self.ACTION)
            getattr(plugin, self.ACTION.lower())()
            scope.checks.after(plugin, self.ACTION)
        except Exception as error:
            raise self.fail(row, self.ACTION, error) from error
        scope.set_state(row, self.ACTION, states.COMPLETE, "state changed", release=True)
        return True
