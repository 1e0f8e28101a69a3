"""The shared store of physical objects the built-in test resource types create.

It stands in for a cloud API: a table every process sees, so a test (or a
person) can count what is live and catch leaks and duplicates. Creation is
keyed on the resource and its traversal, so a task re-run after a crash
finds the object its first run made instead of making a second one.

Every change can also be *fenced* on the resource lock, as a cloud API
taking a fencing token would: ``fence=(resource_id, holder)`` lets the
change happen only while ``holder`` (``traversal/owner``; or any run of the
traversal when it ends with ``/``) holds the resource's lock, checked under
a row lock in the same transaction. A conductor that was
paused mid-action while another traversal took the resource over (its
session expired, so it was presumed dead) then cannot create an object
nobody will delete, nor undo what the newer traversal did.
"""

import types
import uuid

import sqlalchemy as sa
from oslo_db import exception as db_exc

from nestedflow import exceptions
from nestedflow.db import fencing, models, precompiled, retrying
from nestedflow.db.owners import OwnerToken


class PhysicalStore(retrying.GuardedStore):
    # The store stands in for a cloud API: a dropped database connection is
    # a transient error its callers should not see (db.retrying).

    def __init__(self, database):
        super().__init__(database)
        table = models.PhysicalObject.__table__
        live = sa.and_(table.c.id == sa.bindparam("w_id"), table.c.deleted_at.is_(None))
        # Built once: every resource action of the built-in types writes
        # here, and Core statements cost a fraction of ORM sessions.
        self._insert = sa.insert(table)
        self._update_live = sa.update(table).where(live)
        # By set of columns written: run precompiled (db.precompiled), and
        # prepared on PostgreSQL -- an update of a thousand resources
        # writes here for most of them.
        self._updates = {}

    def create(self, create_key, *, stack_id, resource_id, resource_name, type_name,
               properties, data=None, fence=None):
        """Create an object once per ``create_key``; returns the object row."""
        values = dict(id=str(uuid.uuid4()), create_key=create_key, stack_id=stack_id,
                      resource_id=resource_id, resource_name=resource_name, type=type_name,
                      properties=properties, data=data, state="ACTIVE",
                      created_at=models.utcnow())
        try:
            if fence is None or OwnerToken(fence[1]).is_any_run:
                with self._db.begin() as conn:
                    _check_fence(conn, fence, resource_name)
                    conn.execute(self._insert, values)
            else:
                self._create_fenced(values, fence, resource_name)
            # What callers read of the row (id, data...), without an ORM
            # instance's bookkeeping for an object nobody will flush.
            return types.SimpleNamespace(**values)
        except db_exc.DBDuplicateEntry:
            return self.find_by_key(create_key)

    def _create_fenced(self, values, fence, resource_name):
        # The insert and its fence in one statement (INSERT ... SELECT ...
        # WHERE the lock is held, the resource row locked FOR UPDATE to the
        # commit as _check_fence locks it): on PostgreSQL one autocommitted
        # round trip where BEGIN, the fence's SELECT, the INSERT and COMMIT
        # were four -- every TestResource create makes one. Who holds the
        # lock is read only when the fence fails, for the error.
        resource_id, token = fence
        traversal, owner = OwnerToken(token).holder_parts
        params = {f"p_{name}": value for name, value in values.items()}
        params.update(w_id=resource_id, w_holder=token, w_traversal=traversal, w_owner=owner)
        inserted = self._db.transaction(
            lambda conn: precompiled.execute(conn, _FENCED_INSERT, params).rowcount)
        if inserted != 1:
            _check_fence_unlocked(self._db, fence, resource_name)

    def find_by_key(self, create_key):
        with self._db.reader() as session:
            return session.scalars(
                sa.select(models.PhysicalObject).where(
                    models.PhysicalObject.create_key == create_key
                )
            ).one_or_none()

    def get(self, physical_id):
        """The live object, or None if it never existed or was deleted."""
        with self._db.reader() as session:
            row = session.get(models.PhysicalObject, physical_id)
            if row is None or row.deleted_at is not None:
                return None
            return row

    def update(self, physical_id, resource_name, fence=None, **values):
        values["updated_at"] = models.utcnow()
        with self._db.begin() as conn:
            _check_fence(conn, fence, resource_name)
            if self._write_live(conn, physical_id, values).rowcount != 1:
                raise exceptions.PhysicalObjectMissing(resource_name, physical_id)

    def delete(self, physical_id, fence=None, resource_name=None):
        """Idempotent: deleting what is already gone is not an error."""
        with self._db.begin() as conn:
            _check_fence(conn, fence, resource_name or physical_id)
            self._write_live(conn, physical_id, {"deleted_at": models.utcnow()})

    def _write_live(self, conn, physical_id, values):
        columns = frozenset(values)
        stmt = self._updates.get(columns)
        if stmt is None:
            table = models.PhysicalObject.__table__
            stmt = self._updates[columns] = self._update_live.values(
                {name: sa.bindparam(f"v_{name}", type_=table.c[name].type)
                 for name in columns})
        params = {f"v_{name}": value for name, value in values.items()}
        params["w_id"] = physical_id
        return precompiled.execute(conn, stmt, params)

    def live(self, stack_id=None):
        with self._db.reader() as session:
            query = sa.select(models.PhysicalObject).where(
                models.PhysicalObject.deleted_at.is_(None)
            )
            if stack_id is not None:
                query = query.where(models.PhysicalObject.stack_id == stack_id)
            return list(session.scalars(query.order_by(models.PhysicalObject.created_at)))


def _fence_statement(lock=True):
    """The resource's lock holder, and whether the run whose token is
    ``w_traversal``/``w_owner`` still owns the stack: one statement that
    locks the resource row (``FOR UPDATE``) and the stack row (``FOR
    SHARE``, :mod:`nestedflow.db.fencing`) until the commit."""
    resources = models.Resource.__table__
    stmt = (sa.select(resources.c.engine_id, fencing.not_taken_over(resources.c.stack_id))
            .where(resources.c.id == sa.bindparam("w_id")))
    return stmt.with_for_update(of=resources) if lock else stmt


_FENCE = _fence_statement()
_FENCE_READ = _fence_statement(lock=False)


def _fenced_insert_statement():
    """PhysicalStore.create's insert, made only while ``w_holder`` holds the
    resource's lock and its run still owns the stack (as :data:`_FENCE`
    checks it, with the same locks)."""
    table = models.PhysicalObject.__table__
    resources = models.Resource.__table__
    columns = ("id", "create_key", "stack_id", "resource_id", "resource_name", "type",
               "properties", "data", "state", "created_at")
    values = sa.select(*(sa.bindparam(f"p_{name}", type_=table.c[name].type)
                         for name in columns))
    return sa.insert(table).from_select(
        columns,
        values.select_from(resources)
        .where(resources.c.id == sa.bindparam("w_id"),
               resources.c.engine_id == sa.bindparam("w_holder"),
               fencing.not_taken_over(resources.c.stack_id))
        .with_for_update(of=resources))


_FENCED_INSERT = _fenced_insert_statement()


def _check_fence_unlocked(db, fence, resource_name):
    """Raise ResourceLocked for a fenced insert that inserted nothing (who
    holds the lock read after the fact, for the message only)."""
    with db.connect() as conn:
        _check_fence(conn, fence, resource_name, lock=False)
    # The fence holds now: it did not when the insert ran.
    raise exceptions.ResourceLocked(resource_name, "a newer owner")


def _check_fence(conn, fence, resource_name, lock=True):
    if fence is None:
        return
    resource_id, token = fence
    token = OwnerToken(token)
    traversal, owner = token.holder_parts
    found = precompiled.execute(conn, _FENCE if lock else _FENCE_READ,
                                {"w_id": resource_id, "w_traversal": traversal,
                                 "w_owner": owner}).first()
    holder = (found[0] if found is not None else None) or ""
    if token.is_any_run:
        held = holder.startswith(token)
    else:
        # The holder's run must also still own its traversal, until the
        # commit.
        held = holder == token and bool(found[1])
    if not held:
        raise exceptions.ResourceLocked(resource_name, holder or "nobody")

