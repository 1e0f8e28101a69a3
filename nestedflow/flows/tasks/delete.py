"""Deleting a resource's object: a stack delete, and an update's cleanup
of old versions and of resources its template dropped."""

from nestedflow import exceptions, states
from nestedflow.flows import hooks
from nestedflow.flows.tasks.base import CLEANED, ResourceTask, in_lock, is_gone

#: The write that marks a row DELETE_IN_PROGRESS (see :func:`delete_resource`).
DELETING = {"action": states.DELETE, "status": states.IN_PROGRESS, "status_reason": "state changed"}


def _deleting(scope):
    """:data:`DELETING` by this traversal: the row (and so its delete events)
    names the traversal that deletes it, not the one that last wrote it --
    an update's cleanup of a version it replaced without touching it."""
    return dict(DELETING, traversal_id=scope.traversal_id)


def delete_resource(scope, row, honour_retain=True, retire=False, started=False):
    """Delete the physical object of a locked row, then release it.

    ``retire`` also drops the row from the stack's current resources (an
    old version or a resource the template no longer has). ``started``: the
    lock already wrote :data:`DELETING`.
    """
    if not started:
        row = scope.write(row, event=scope.runtime.engine_id, **_deleting(scope))
    try:
        values = deleted(scope, row, honour_retain, retire)
    except exceptions.OwnershipLost:
        raise
    except Exception as error:
        reason = f"{type(error).__name__}: {error}"
        scope.set_state(row, states.DELETE, states.FAILED, reason, release=True)
        raise exceptions.ResourceFailure(row.name, states.DELETE, error) from error
    return scope.write(row, event=scope.runtime.engine_id, release=True, **values)


def deleted(scope, row, honour_retain=True, retire=False):
    """Delete the object of ``row`` as :data:`DELETING` left it; returns the
    write that records it DELETE_COMPLETE (see :func:`delete_resource`)."""
    if scope.action == states.DELETE:
        hooks.break_if_required(scope, row, states.DELETE, "pre-delete")
    if not (honour_retain and row.deletion_policy == "Retain"):
        plugin = scope.plugin(row, row.properties_data or {})
        # Heat: Snapshot keeps a snapshot (a backup) first, where the type can.
        snapshot_delete = getattr(plugin, "handle_snapshot_delete", None)
        if honour_retain and row.deletion_policy == "Snapshot" and snapshot_delete:
            snapshot_delete()
        else:
            plugin.delete()
    values = {"current": False} if retire else {}
    return dict(action=states.DELETE, status=states.COMPLETE, status_reason="state changed",
                **values)


def deleting(scope, row, retire=False):
    """The lock's writes that start a cleanup's delete of ``row`` (and, for a
    database-only type, do it: :func:`in_lock`)."""
    if not scope.in_database_only(row):
        return _deleting(scope)

    def delete(row):
        scope.cleanup_started = True
        return deleted(scope, row, retire=retire)

    return [_deleting(scope), lambda row: in_lock(delete, row)]


class DeleteResource(ResourceTask):
    """Delete one row, after every row that needed it (in its own template's graph)."""

    ACTION = states.DELETE

    def __init__(self, scope, row, needed_by_ids, after=()):
        super().__init__(
            scope,
            row,
            requires=[CLEANED.format(i) for i in needed_by_ids] + list(after),
            provides=CLEANED.format(row.id),
        )

    def execute(self, traversal, **inputs):
        scope = self.scope
        retire = scope.converging

        def kept(row):
            # A replacement an older traversal was still creating when this
            # flow was built: it has become the current version since.
            return retire and row.current and row.name in scope.definition.resources

        row = self.lock_for(lambda row: None if kept(row) or is_gone(row)
                            else deleting(scope, row, retire), fresh=True)
        if row.engine_id != scope.holder:
            return True  # deleted in the lock's transaction
        if kept(row):
            scope.release(row)
            return True
        if is_gone(row):
            # Never created (or already deleted): an update still drops it
            # from the stack's resources.
            scope.write(row, release=True, **({"current": False} if retire else {}))
            return True
        scope.cleanup_started = True
        delete_resource(scope, row, retire=retire, started=True)
        return True


class CleanupReplaced(DeleteResource):
    """Cleanup of a row that stays in the template: delete it only if replaced."""

    ACTION = "CLEANUP"

    def execute(self, traversal, **inputs):
        scope = self.scope
        # Most rows were kept or updated in place: still current, nothing to
        # delete. Every converge -- ours, and an older traversal's action
        # in flight, which ours waited for -- released this row before the
        # barrier this task runs after, so a row current now stays current
        # for this traversal. Known from this run's converge, or else read:
        # instead of a lock and its release (two commits each; a third of
        # an update's writes when few resources are replaced).
        kept = scope.converged.get(self.row_id)
        if kept:
            return True
        if kept is None:
            found = scope.db.read_resource(self.row_id)
            if found is not None and found.engine_id is None and found.current:
                return True
        row = self.lock_for(lambda row: None if row.current or is_gone(row)
                            else deleting(scope, row))
        if row.engine_id != scope.holder:
            return True  # deleted in the lock's transaction
        if row.current or is_gone(row):
            scope.release(row)
            return True
        scope.cleanup_started = True
        delete_resource(scope, row, started=True)
        return True
