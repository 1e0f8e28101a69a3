"""Stored stack snapshots (``stack_snapshots``) and stack tags (``stack_tags``)."""

import sqlalchemy as sa
from oslo_db import exception as db_exc

from nestedflow import exceptions, states
from nestedflow.db import core_reads, models, retrying


class SnapshotStore(retrying.GuardedStore):
    """Snapshot rows of one database (a :class:`nestedflow.db.api.Database`)."""

    def create(self, stack_id, name, snapshot_id):
        """A new snapshot row. Its id is the caller's, chosen once: a call
        tried again after a commit whose answer the dropped connection lost
        finds that row instead of adding a second snapshot."""
        row = models.StackSnapshot(id=snapshot_id, stack_id=stack_id, name=name,
                                   status=states.IN_PROGRESS, status_reason="", data=None)
        try:
            with self._db.writer() as session:
                session.add(row)
        except db_exc.DBDuplicateEntry:
            return self.get(stack_id, snapshot_id)
        return row

    def settle(self, snapshot_id, status, reason, data=None):
        with self._db.writer() as session:
            session.execute(sa.update(models.StackSnapshot)
                            .where(models.StackSnapshot.id == snapshot_id)
                            .values(status=status, status_reason=reason, data=data,
                                    updated_at=models.utcnow()))
        return self.get(None, snapshot_id)

    def get(self, stack_id, snapshot_id):
        """The snapshot (of ``stack_id``, when given); SnapshotNotFound if none."""
        with self._db.reader() as session:
            row = session.get(models.StackSnapshot, snapshot_id)
        if row is None or (stack_id is not None and row.stack_id != stack_id):
            raise exceptions.SnapshotNotFound(snapshot_id)
        return row

    def list(self, stack_id):
        with self._db.reader() as session:
            return list(session.scalars(
                sa.select(models.StackSnapshot)
                .where(models.StackSnapshot.stack_id == stack_id)
                .order_by(models.StackSnapshot.created_at)))

    def delete(self, stack_id, snapshot_id):
        self.get(stack_id, snapshot_id)
        with self._db.writer() as session:
            session.execute(sa.delete(models.StackSnapshot)
                            .where(models.StackSnapshot.id == snapshot_id))


class TagStore(retrying.GuardedStore):
    """Stack tags, one row each (as Heat's ``stack_tag``)."""

    def set(self, stack_id, tags):
        with self._db.writer() as session:
            session.execute(sa.delete(models.StackTag)
                            .where(models.StackTag.stack_id == stack_id))
            for tag in dict.fromkeys(tags or ()):
                session.add(models.StackTag(stack_id=stack_id, tag=tag))

    def of(self, stack_ids):
        """stack id -> its tags (in the order given), for ``stack_ids``."""
        if not stack_ids:
            return {}
        # Read with every stack shown: one statement, no ORM session.
        with self._db.connect() as conn:
            return core_reads.tags_of(conn, stack_ids)
