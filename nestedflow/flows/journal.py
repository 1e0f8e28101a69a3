"""TaskFlow's progress journal (flow and atom details), fenced and resumable.

Each run of a traversal -- each claim of its job -- journals into a flow
detail of its own in the stack's logbook. A run that resumes a traversal
copies the latest earlier run's detail: TaskFlow then skips what finished,
re-runs what was in flight (every task is idempotent) and, if that run was
rolling back, goes on rolling back.

TaskFlow has no fencing (DESIGN.md section 5): a conductor paused past its
ZooKeeper session keeps running its engine and writing its journal. So
every journal write of a run first checks that the run still owns the
traversal (``stacks.traversal_owner``); a fenced run's engine fails at its
next write, before it schedules another task. The check precedes the write
instead of sharing its transaction so that a run paused mid-write never
holds a row lock the next owner needs; a write that passed its check just
before the takeover still holds what the legitimate owner computed, and
lands in that run's own flow detail, which the next owner has copied (or
will copy) as the latest state anyway.
"""

import contextlib
import uuid

from taskflow import exceptions as tf_exceptions
from taskflow.persistence import base as tf_base
from taskflow.persistence import models as tf_models

from nestedflow import exceptions


class Fenced(exceptions.OwnershipLost):
    """A journal write by a run that no longer owns its traversal.

    Deliberately not TaskFlow's StorageFailure: TaskFlow retries those for
    15 seconds, while a fenced run must stop at once.
    """


class FencedBackend(tf_base.Backend):
    """Wraps a TaskFlow backend; writes pass only while ``fence()`` does."""

    def __init__(self, backend, fence):
        super().__init__({})
        self._backend = backend
        self._fence = fence

    def get_connection(self):
        return _FencedConnection(self, self._backend.get_connection(), self._fence)

    def close(self):
        """The wrapped backend belongs to whoever made it."""


class _FencedConnection(tf_base.Connection):
    def __init__(self, backend, connection, fence):
        self._backend = backend
        self._conn = connection
        self._fence = fence

    @property
    def backend(self):
        return self._backend

    def close(self):
        self._conn.close()

    def upgrade(self):
        self._conn.upgrade()

    def clear_all(self):
        raise exceptions.NestedflowError("a traversal run may not clear the journal")

    def validate(self):
        self._conn.validate()

    def update_atom_details(self, atom_detail):
        self._fence()
        return self._conn.update_atom_details(atom_detail)

    def update_flow_details(self, flow_detail):
        self._fence()
        return self._conn.update_flow_details(flow_detail)

    def save_logbook(self, book):
        self._fence()
        return self._conn.save_logbook(book)

    def destroy_logbook(self, book_uuid):
        raise exceptions.NestedflowError("a traversal run may not destroy a logbook")

    def get_logbook(self, book_uuid, lazy=False):
        return self._conn.get_logbook(book_uuid, lazy=lazy)

    def get_logbooks(self, lazy=False):
        return self._conn.get_logbooks(lazy=lazy)

    def get_flows_for_book(self, book_uuid, lazy=False):
        return self._conn.get_flows_for_book(book_uuid, lazy=lazy)

    def get_flow_details(self, fd_uuid, lazy=False):
        return self._conn.get_flow_details(fd_uuid, lazy=lazy)

    def get_atom_details(self, ad_uuid):
        return self._conn.get_atom_details(ad_uuid)

    def get_atoms_for_flow(self, fd_uuid):
        return self._conn.get_atoms_for_flow(fd_uuid)


def owner_fence(db, stack_id, traversal_id, owner):
    """A fence that passes while ``owner`` runs the stack's current traversal."""

    def fence():
        current, current_owner, _, _ = db.ownership(stack_id)
        if current != traversal_id or current_owner != owner:
            raise Fenced(f"run {owner} of traversal {traversal_id} of stack {stack_id} "
                         f"was fenced off (now {current}/{current_owner})")

    return fence


def latest_detail(backend, stack_id, traversal_id):
    """The flow detail of the latest run (or the posting) of the traversal."""
    with contextlib.closing(backend.get_connection()) as conn:
        runs = [fd for fd in conn.get_flows_for_book(stack_id, lazy=True)
                if (fd.meta or {}).get("traversal_id") == traversal_id]
        if not runs:
            return None
        latest = max(runs, key=lambda fd: (fd.meta or {}).get("run", 0))
        return conn.get_flow_details(latest.uuid)


def copy_forward(backend, stack_id, previous, name, meta):
    """Save a new flow detail holding ``previous``'s progress under ``meta``."""
    detail = tf_models.FlowDetail(name, uuid=str(uuid.uuid4()))
    detail.meta = meta
    if previous is not None:
        detail.state = previous.state
        for atom in previous:
            data = atom.to_dict()
            data["uuid"] = str(uuid.uuid4())
            detail.add(type(atom).from_dict(data))
    with contextlib.closing(backend.get_connection()) as conn:
        try:
            book = conn.get_logbook(stack_id, lazy=True)
        except tf_exceptions.NotFound:
            book = tf_models.LogBook(f"stack-{stack_id}", uuid=stack_id)
        book.add(detail)
        # One transaction: the copy is whole or absent.
        conn.save_logbook(book)
    return detail
