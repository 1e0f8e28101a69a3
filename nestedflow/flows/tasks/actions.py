"""Suspend, resume and check: one action per resource, nothing to undo."""

from nestedflow import states
from nestedflow.flows.tasks.base import ResourceTask, is_gone


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
