"""Re-running part of a stack, and continuing a stopped create.

A re-run (``Engine.rerun``) is an UPDATE traversal to the stack's current
template that acts only on the resources of its plan: each is re-checked
(its plugin's ``check`` and the post-checks of its last action) and
converged -- created if it never was, replaced if it failed or its object
is gone, updated if its inputs changed. The other resources are handed on
as they are, untouched. With ``checks_only`` (a CHECK traversal) only the
checks run: a smoke test of a live deployment.

A continue of a stopped create (``Engine.continue_stack``) is a CREATE
traversal that hands on what an earlier traversal of the create completed
and creates the rest.

Neither rolls back: they repair, and a failure leaves the state for the
next try (:meth:`TraversalScope.rollback_enabled`).
"""

from nestedflow import exceptions, states
from nestedflow.db import check_results
from nestedflow.flows.tasks.base import SYMBOL, ResourceTask, ScopedTask, is_gone, output_of
from nestedflow.flows.tasks.converge import ConvergeResource
from nestedflow.flows.tasks.create import CreateResource
from nestedflow.flows.tasks.traversal import CompleteTraversal

#: The resource action whose post-checks a re-check runs (a resource last
#: checked, suspended or resumed was created or updated before that).
_CHECKED_AS = {states.CREATE: states.CREATE, states.UPDATE: states.UPDATE}


class RerunResource(ConvergeResource):
    """Re-check one resource and converge it to the current template."""

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = self._current()
        if row.traversal_id == scope.traversal_id and row.status == states.COMPLETE:
            return {**output_of(scope.release(row)), "undo": None}  # re-run after a crash
        properties = self.resolve(inputs, row)
        healthy = row.status == states.COMPLETE and not is_gone(row) and (
            row.action != states.INIT) and row.type == self._new_type()
        unchanged = healthy and properties == (row.properties_data or {}) and (
            (row.attr_data or {}).get("fingerprint") == self.fingerprint(row.type, properties))
        if not unchanged:
            scope.release(row)
            # Created, replaced or updated as any update would.
            return super().execute(traversal, **inputs)
        plugin = scope.plugin(row, properties)
        row = scope.set_state(row, states.CHECK, states.IN_PROGRESS, "re-run: checking",
                              traversal_id=scope.traversal_id)
        try:
            plugin.check()
        except exceptions.OwnershipLost:
            raise
        except Exception:
            # The plugin cannot bring it back: re-create it (a replacement;
            # cleanup deletes whatever is left of the old one).
            row = scope.set_state(row, states.CHECK, states.FAILED, "re-run: re-creating")
            return self._replace(row, properties, inputs)
        try:
            scope.checks.after(plugin, _CHECKED_AS.get(row.action, states.CREATE))
        except Exception as error:
            raise self.fail(row, states.CHECK, error) from error
        row = scope.set_state(row, states.CHECK, states.COMPLETE, "re-run: checked",
                              release=True)
        return {**output_of(row), "undo": None}


class KeepResource(ScopedTask):
    """A resource a re-run leaves alone: its data is handed on, nothing written."""

    def __init__(self, scope, row, dependency_names):
        super().__init__(name=f"keep {row.name} #{row.id}", provides=SYMBOL.format(row.name),
                         requires=["traversal", *[SYMBOL.format(n) for n in dependency_names]])
        self.scope = scope
        self.row_id = row.id

    def execute(self, traversal, **inputs):
        return output_of(self.scope.db.get_resource(self.row_id))


class RecheckResource(ResourceTask):
    """``checks_only``: the post-checks of the resource's last action, and
    nothing else -- the row is not even written. A failure is stored with
    the check results and fails the traversal at its end, once every check
    ran (:class:`CompleteRerun`)."""

    ACTION = states.CHECK

    def __init__(self, scope, row):
        super().__init__(scope, row, provides=f"done:{row.id}")
        self.row = row

    def execute(self, traversal, **inputs):
        scope = self.scope
        scope.check_owner()
        row = self.row
        if is_gone(row):
            return True
        plugin = scope.plugin(row, row.properties_data or {})
        try:
            scope.checks.after(plugin, _CHECKED_AS.get(row.action, states.CREATE))
        except exceptions.CheckFailed:
            pass  # recorded; CompleteRerun reports it
        return True


class ContinueCreate(CreateResource):
    """Create a resource unless an earlier traversal of the create did."""

    def _done(self, row):
        return (row.action, row.status) == (states.CREATE, states.COMPLETE)

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = scope.lock(self.row_id)
        if row.status == states.FAILED and row.physical_id:
            # A create that failed after making its object (a post-check):
            # that object goes before a new one is made.
            scope.plugin(row, row.properties_data or {}).delete()
            row = scope.write(row, physical_id=None)
        scope.release(row)
        return super().execute(traversal, **inputs)


class CompleteRerun(CompleteTraversal):
    """Last task of a re-run: fails it, naming them, when a check failed or
    a resource the re-run left alone is not complete."""

    def execute(self, traversal, **inputs):
        scope = self.scope
        failed = sorted({f"{r.resource_name} ({r.phase}-check {r.check_name!r}: {r.message})"
                         for r in check_results.list_results(scope.db, scope.stack.id,
                                                             scope.traversal_id)
                         if r.status == "FAIL"})
        if failed:
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise exceptions.NestedflowError(f"check failed: {failed[0]}{more}")
        if scope.action != states.CHECK:
            unfinished = sorted(
                f"{row.name} ({row.action}_{row.status})"
                for row in scope.db.list_resources(scope.stack.id)
                if row.status != states.COMPLETE or row.action == states.INIT)
            if unfinished:
                raise exceptions.NestedflowError(
                    f"not complete and not re-run: {', '.join(unfinished)} (re-run them "
                    "too, e.g. with_dependents)")
        return super().execute(traversal, **inputs)
