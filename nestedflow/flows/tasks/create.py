"""Creating a resource in a stack create."""

from nestedflow import states
from nestedflow.flows.tasks.base import SYMBOL, ResourceTask, in_lock, output_of
from nestedflow.flows.tasks.delete import delete_resource


class CreateResource(ResourceTask):
    ACTION = states.CREATE

    def __init__(self, scope, row, dependency_names):
        super().__init__(scope, row, requires=[SYMBOL.format(n) for n in dependency_names],
                         provides=SYMBOL.format(row.name))

    def execute(self, traversal, **inputs):
        scope = self.scope
        try:
            properties = self.resolve(inputs)
        except Exception as error:
            row = scope.lock(self.row_id)
            if self._done(row):
                return output_of(scope.release(row))
            raise self.fail(row, self.ACTION, error) from error
        row = self.lock_for(lambda row: self._start(row, properties), fresh=True)
        if row.engine_id != scope.holder:
            return output_of(row)  # created in the lock's transaction
        if self._done(row):
            # Re-run after a crash: the work is done, hand its results on.
            return output_of(scope.release(row))
        return output_of(self.create_on(row, properties, release=True, started=True))

    def _start(self, row, properties):
        if self._done(row):
            return None
        creating = self.creating(row, properties)
        if not self.scope.in_database_only(row):
            return creating
        return [creating, lambda row: in_lock(self.created, row, properties)]

    def _done(self, row):
        return (row.action, row.status) == (states.CREATE, states.COMPLETE) and (
            row.traversal_id == self.scope.traversal_id)

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        row = scope.lock(self.row_id)
        if row.traversal_id != scope.traversal_id or row.action == states.INIT or (
            row.action, row.status) == (states.DELETE, states.COMPLETE):
            scope.release(row)
            return
        # Rollback undoes the create: Retain protects objects from a stack
        # delete, not from the failed create that made them.
        delete_resource(scope, row, honour_retain=False)
