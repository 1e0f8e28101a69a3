"""Signals resources accepted and breakpoints (hooks) actions reached.

A signal is written once per ``(resource row, key)``: the same signal sent
again (a retried call carries the same key) finds its row and changes
nothing. A hook is reached once per ``(resource row, hook, traversal)``: a
re-run of the paused action after a crash finds it, cleared or not, and
does not pause a second time. Clearing is one compare-and-swap ``UPDATE``
of a hook still pending, so two clears of one hook succeed once.
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from nestedflow.db import models


class SignalStore:
    """The signals and hooks part of :class:`nestedflow.db.api.Database`."""

    def add_signal(self, row, key, details):
        """Keep ``details`` as signal ``key`` of resource ``row``; returns
        False when that signal was kept already (nothing changes)."""
        table = models.ResourceSignal.__table__
        try:
            with self._engine.begin() as conn:
                conn.execute(table.insert().values(
                    stack_id=row.stack_id, resource_id=row.id, resource_name=row.name,
                    signal_key=key, details=details, created_at=models.utcnow()))
        except (sa_exc.IntegrityError, db_exc.DBDuplicateEntry):
            return False
        return True

    def replace_signal(self, resource_id, key, details):
        table = models.ResourceSignal.__table__
        with self._engine.begin() as conn:
            conn.execute(sa.update(table).where(
                table.c.resource_id == resource_id, table.c.signal_key == key)
                .values(details=details))

    def list_signals(self, resource_id):
        """The signals of one resource row, oldest first, as (key, details)."""
        table = models.ResourceSignal.__table__
        with self.connect() as conn:
            return [(found.signal_key, found.details) for found in conn.execute(
                sa.select(table.c.signal_key, table.c.details)
                .where(table.c.resource_id == resource_id).order_by(table.c.id))]

    def delete_signals(self, resource_id):
        table = models.ResourceSignal.__table__
        with self._engine.begin() as conn:
            conn.execute(sa.delete(table).where(table.c.resource_id == resource_id))

    def reach_hook(self, row, hook, traversal_id):
        """Record that ``row``'s action reached ``hook`` in ``traversal_id``;
        returns (newly reached, still pending)."""
        table = models.ResourceHook.__table__
        try:
            with self._engine.begin() as conn:
                conn.execute(table.insert().values(
                    stack_id=row.stack_id, resource_id=row.id, resource_name=row.name,
                    hook=hook, traversal_id=traversal_id, created_at=models.utcnow()))
        except (sa_exc.IntegrityError, db_exc.DBDuplicateEntry):
            return False, self.hook_pending(row.id, hook, traversal_id)
        return True, True

    def hook_pending(self, resource_id, hook, traversal_id):
        table = models.ResourceHook.__table__
        with self.connect() as conn:
            cleared = conn.execute(
                sa.select(table.c.cleared_at).where(
                    table.c.resource_id == resource_id, table.c.hook == hook,
                    table.c.traversal_id == traversal_id)).first()
        return cleared is not None and cleared.cleared_at is None

    def clear_hook(self, stack_id, resource_name, hook):
        """Clear ``hook`` where an action of the named resource waits on it;
        returns False when none does."""
        table = models.ResourceHook.__table__
        with self._engine.begin() as conn:
            done = conn.execute(
                sa.update(table).where(
                    table.c.stack_id == stack_id, table.c.resource_name == resource_name,
                    table.c.hook == hook, table.c.cleared_at.is_(None))
                .values(cleared_at=models.utcnow()))
        return done.rowcount > 0

    def pending_hooks(self, stack_id):
        """(resource name, hook) of the stack's actions paused at a hook."""
        table = models.ResourceHook.__table__
        with self.connect() as conn:
            return [(found.resource_name, found.hook) for found in conn.execute(
                sa.select(table.c.resource_name, table.c.hook)
                .where(table.c.stack_id == stack_id, table.c.cleared_at.is_(None))
                .order_by(table.c.id))]
