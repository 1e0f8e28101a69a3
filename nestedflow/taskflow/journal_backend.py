"""A TaskFlow persistence backend that journals a run in few statements.

TaskFlow's stock SQL persistence commits every atom transition on its own
(PENDING->RUNNING, progress 0.0 and 1.0, SUCCESS with the result: about
eleven statements and four commits per task, each through a connection
object that rebuilds the table metadata), and rewrites every atom row of
the flow whenever the flow's state changes. That, not the resources,
dominated large stacks (doc/source/performance.rst).

:class:`JournalBackend` keeps the run's journal -- the same logbook, flow
detail and atom detail tables, readable by the stock backend -- but writes
it *behind* the engine:

* atom updates land in memory and are flushed together, in one
  transaction, at most ``flush_interval`` seconds later by a flusher
  thread;
* flow-detail and logbook writes (the run's detail and its atoms being
  created, the run reverting, suspending, ending: a handful per run)
  flush everything pending with them, synchronously; the run starting
  (RUNNING) is written behind like an atom transition;
* :meth:`JournalBackend.flush` at the end of a run makes it all durable.

Each flush writes the state of every dirty atom as of one instant, in one
transaction, so what is durable is always a consistent earlier state of
the run: a crash loses at most the last interval, which is the same as
having crashed that much earlier -- resumption then re-runs the tasks that
finished meanwhile, and every task is idempotent (it finds its resource
row already done by this traversal and hands the result on).

Fencing (TaskFlow has none; doc/source/conductors.rst, "Crashes, pauses
and fencing") is checked by the first
statement of every flush's transaction, and holds until its commit
(:mod:`nestedflow.db.fencing`), instead of before every write: a fenced
run's writes never land, and
from then on every write it attempts raises :class:`exceptions.Fenced`, which
stops its engine. The few tasks it may start in between are fenced by the
resource locks and the stack's owner check like any task.
"""

import contextlib
import logging
import threading

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from taskflow import states
from taskflow import storage as tf_storage
from taskflow.persistence import base as tf_base
from taskflow.persistence import models as tf_models
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables

from nestedflow import exceptions
from nestedflow.db import retrying
from nestedflow.taskflow import compat as taskflow_compat

LOG = logging.getLogger(__name__)

#: Seconds an atom transition may wait in memory before it is written.
FLUSH_INTERVAL = 0.1


#: TaskFlow's tables, described once per process: SQLAlchemy caches a
#: compiled statement per Table object, so tables made anew for every run
#: would compile every statement anew.
_TABLES = tf_tables.fetch(sa.MetaData())


#: UPDATE of a journal row by uuid; the columns are the parameters' keys.
_UPDATES = {table.name: sa.update(table).where(table.c.uuid == sa.bindparam("_uuid"))
            for table in (_TABLES.flowdetails, _TABLES.atomdetails)}


def _on_conflict_do_nothing(insert):
    def statement(table, row):
        return insert(table).values(**row).on_conflict_do_nothing()
    return statement


def _on_duplicate_key_keep(table, row):
    statement = mysql.insert(table).values(**row)
    return statement.on_duplicate_key_update(uuid=statement.inserted.uuid)


#: By dialect: an INSERT of a row that does nothing if its key is taken --
#: one statement where a look-up and an insert would be two.
_INSERT_IF_MISSING = {
    "postgresql": _on_conflict_do_nothing(postgresql.insert),
    "sqlite": _on_conflict_do_nothing(sqlite.insert),
    "mysql": _on_duplicate_key_keep,
    "mariadb": _on_duplicate_key_keep,
}


def _atom_row(atom_detail, redact):
    """The atom's row, its result as the journal keeps it (``redact``, see
    JournalBackend); the engine goes on with the whole result in memory."""
    row = atom_detail.to_dict()
    row["results"] = redact(row["results"])
    return row


class _Pending:
    """Journal writes not flushed yet, by kind, in the order a flush writes them."""

    KINDS = ("books", "new_flows", "new_atoms", "flows", "atoms")

    def __init__(self):
        self.books = {}  # logbook uuid -> row, inserted if missing
        self.new_flows = {}  # flow uuid -> insert row
        self.new_atoms = {}  # atom uuid -> insert row
        self.flows = {}  # flow uuid -> row to update, latest wins
        self.atoms = {}  # atom uuid -> row to update, latest wins

    def __len__(self):
        return sum(len(getattr(self, kind)) for kind in self.KINDS)

    @staticmethod
    def write(inserts, updates, uuid, row):
        """Queue ``row`` as the latest state of ``uuid``: into its insert
        if that is still queued (a run's start lands with its atoms' later
        states, a row each), else as an update."""
        queued = inserts.get(uuid)
        if queued is not None:
            queued.update(row)
        else:
            updates[uuid] = row

    def followed_by(self, later):
        """These writes, then ``later``'s: a newer write of a column wins
        (an atom's update holds only the columns that changed)."""
        merged = _Pending()
        for kind in self.KINDS:
            rows = {uuid: dict(row) for uuid, row in getattr(self, kind).items()}
            for uuid, row in getattr(later, kind).items():
                rows.setdefault(uuid, {}).update(row)
            setattr(merged, kind, rows)
        return merged


def _journaled(row):
    """What the journal holds of an atom once ``row`` lands: its values,
    dicts and lists copied (a later transition must not change them)."""
    return {key: value.copy() if isinstance(value, (dict, list)) else value
            for key, value in row.items()}


class JournalBackend(tf_base.Backend):
    """Write-behind journal of one run (see the module docstring).

    ``stock`` is TaskFlow's SQLAlchemy backend on the same database (reads
    go through it); ``engine`` the SQLAlchemy engine it shares; ``fence()``
    raises :class:`exceptions.Fenced` once the run no longer owns its traversal;
    ``redact(results)`` what of a task's results the journal keeps (the
    flows know what a resource task's result holds:
    :func:`nestedflow.flows.journal.redacted`), asked for by name because the
    journal outlives its traversal and must not keep hidden values by default.
    """

    def __init__(self, stock, engine, fence, flush_interval=FLUSH_INTERVAL, *, redact):
        super().__init__({})
        self._stock = stock
        self._redact = redact
        self._engine = engine
        self._fence = fence
        self._tables = _TABLES
        self._lock = threading.Lock()
        # Serializes flushes: one writer, so the durable journal only moves forward.
        self._flush_lock = threading.Lock()
        self._pending = _Pending()
        # Atom uuids with a row, or with an insert queued or in flight: a
        # flow detail saved while its atoms' insert is being flushed must
        # not queue them again.
        self._known_atoms = set()
        # Atom uuid -> the row as this run last queued it: an update writes
        # only the columns that changed since. An atom's row has ten
        # columns, five of them JSON each encoded per write; a task's
        # completion changes three (state, results, meta's progress) --
        # JSON encoding was a third of a flush's CPU (1,000 TestResources
        # on PostgreSQL: 14% of the run's CPU in the journal's flushes).
        self._last_rows = {}
        self._fenced = None
        self._closed = threading.Event()
        self._dirty = threading.Event()
        self._interval = flush_interval
        self._flusher = threading.Thread(target=self._flush_loop, daemon=True,
                                         name="journal-flusher")
        self._flusher.start()

    # -- the TaskFlow Backend interface ---------------------------------

    def get_connection(self):
        return _Connection(self)

    def close(self):
        """Flush what is pending and stop the flusher (the stock backend
        belongs to whoever made it)."""
        if self._closed.is_set():
            return
        try:
            self.flush()
        finally:
            self._closed.set()
            self._dirty.set()
            self._flusher.join(5)

    # -- writes ---------------------------------------------------------

    def _check_fenced(self):
        if self._fenced is not None:
            raise exceptions.Fenced(str(self._fenced))

    def record_atom(self, atom_detail):
        self._check_fenced()
        row = _atom_row(atom_detail, self._redact)
        uuid = atom_detail.uuid
        with self._lock:
            pending = self._pending
            last, self._last_rows[uuid] = self._last_rows.get(uuid), _journaled(row)
            if last is None or uuid in pending.new_atoms:
                pending.write(pending.new_atoms, pending.atoms, uuid, row)
            else:
                changed = {key: value for key, value in row.items()
                           if key not in last or last[key] != value}
                if not changed:
                    return atom_detail
                pending.atoms.setdefault(uuid, {}).update(changed)
        self._dirty.set()
        return atom_detail

    def record_flow(self, flow_detail):
        """A flow detail's own row and any atom it gained.

        Written at once, except the run starting (RUNNING, no new atom):
        that is written behind like an atom transition, since resuming
        from the state before it means the same as resuming from it.
        """
        self._check_fenced()
        row = flow_detail.to_dict()
        gained = False
        with self._lock:
            pending = self._pending
            pending.write(pending.new_flows, pending.flows, flow_detail.uuid, row)
            for atom in flow_detail:
                if atom.uuid not in self._known_atoms:
                    pending.new_atoms[atom.uuid] = self._atom_insert(atom, flow_detail.uuid)
                    self._known_atoms.add(atom.uuid)
                    gained = True
        if gained or row["state"] != states.RUNNING:
            self.flush()
        else:
            self._dirty.set()
        return flow_detail

    def save_logbook(self, book):
        """Insert (or update) the logbook and its flow details in one transaction."""
        self._locked_write(self._upsert_book, book)
        return book

    def add_flow_detail(self, book_uuid, book_name, detail, behind=False):
        """Insert a new flow detail with its atoms -- and the logbook, if there
        is none yet -- in one transaction.

        What :meth:`save_logbook` does for a book gaining one detail, without
        reading the book and its stored details first. ``behind``: queued
        with the atom transitions instead, to land with the next flush
        (before any of them). A run's start does that: losing it to a
        crash is the same as crashing before it, and the run's first
        actions need not wait for it.
        """
        if not behind:
            self._locked_write(self._add_detail, book_uuid, book_name, detail)
            return detail
        self._check_fenced()
        with self._lock:
            pending = self._pending
            pending.books[book_uuid] = self._book_row(book_uuid, book_name)
            pending.new_flows[detail.uuid] = dict(detail.to_dict(), parent_uuid=book_uuid)
            pending.new_atoms.update((atom.uuid, self._atom_insert(atom, detail.uuid))
                                     for atom in detail)
            self._known_atoms.update(atom.uuid for atom in detail)
        self._dirty.set()
        return detail

    def _locked_write(self, write, *args):
        self._check_fenced()
        with self._flush_lock:
            self._write_pending_locked(write, *args)

    def flush(self):
        """Write everything pending in one transaction (raises Fenced if fenced)."""
        with self._flush_lock:
            if not self._has_pending():
                self._check_fenced()
                return
            self._write_pending_locked()

    def _has_pending(self):
        with self._lock:
            return bool(self._pending)

    def _fence_or_raise(self, conn):
        """The transaction's first statement: the run still owns its
        traversal, and keeps it until the commit (db.fencing)."""
        self._check_fenced()
        try:
            self._fence(conn)
        except exceptions.Fenced as error:
            self._fenced = error
            with self._lock:
                dropped, self._pending = len(self._pending), _Pending()
            LOG.debug("journal fenced off; %d pending write(s) dropped: %s", dropped, error)
            raise

    # Pending writes are put back when a flush fails, so a flush the
    # server dropped the connection under is simply run again.
    @retrying.on_disconnect
    def _write_pending_locked(self, write=None, *args):
        """Everything pending, then ``write(conn, *args)``, in one fenced transaction."""
        self._check_fenced()
        with self._lock:
            pending, self._pending = self._pending, _Pending()
        if not pending and write is None:
            return
        t = self._tables
        try:
            with self._engine.begin() as conn:
                self._fence_or_raise(conn)
                for row in pending.books.values():
                    self._insert_book_if_missing(conn, row)
                if pending.new_flows:
                    conn.execute(sa.insert(t.flowdetails), list(pending.new_flows.values()))
                if pending.new_atoms:
                    conn.execute(sa.insert(t.atomdetails), list(pending.new_atoms.values()))
                for table, rows in ((t.flowdetails, pending.flows),
                                    (t.atomdetails, pending.atoms)):
                    # One executemany per set of columns written.
                    batches = {}
                    for uuid, row in rows.items():
                        batches.setdefault(frozenset(row), []).append(dict(row, _uuid=uuid))
                    for batch in batches.values():
                        conn.execute(_UPDATES[table.name], batch)
                if write is not None:
                    write(conn, *args)
        except exceptions.Fenced:
            raise
        except Exception:
            # Keep them for the next flush; newer writes of the same rows win.
            with self._lock:
                self._pending = pending.followed_by(self._pending)
            raise

    def _flush_loop(self):
        while not self._closed.is_set():
            self._dirty.wait()
            if self._closed.wait(self._interval):
                return
            self._dirty.clear()
            try:
                self.flush()
            except exceptions.Fenced:
                return
            except Exception as error:
                # The engine's next synchronous write (or the run's final
                # flush) reports it; the pending writes are kept meanwhile.
                LOG.warning("journal flush failed, retrying: %s", error)
                self._dirty.set()

    # -- rows -----------------------------------------------------------

    def _atom_insert(self, atom, flow_uuid):
        row = _atom_row(atom, self._redact)
        self._last_rows[atom.uuid] = _journaled(row)
        row["parent_uuid"] = flow_uuid
        row["atom_type"] = tf_models.atom_detail_type(atom)
        return row

    def _upsert_book(self, conn, book):
        t = self._tables
        book_row = book.to_dict()
        if not self._book_exists(conn, book.uuid):
            conn.execute(sa.insert(t.logbooks).values(**book_row))
        else:
            conn.execute(sa.update(t.logbooks).where(t.logbooks.c.uuid == book.uuid)
                         .values(meta=book_row["meta"], name=book_row["name"]))
        details = list(book)
        if not details:
            return
        stored = set(conn.scalars(sa.select(t.flowdetails.c.uuid)
                                  .where(t.flowdetails.c.uuid.in_([d.uuid for d in details]))))
        self._insert_details(conn, book.uuid, [d for d in details if d.uuid not in stored])

    def _add_detail(self, conn, book_uuid, book_name, detail):
        self._insert_book_if_missing(conn, self._book_row(book_uuid, book_name))
        self._insert_details(conn, book_uuid, [detail])

    @staticmethod
    def _book_row(book_uuid, book_name):
        return tf_models.LogBook(book_name, uuid=book_uuid).to_dict()

    def _insert_book_if_missing(self, conn, book_row):
        insert_if_missing = _INSERT_IF_MISSING.get(conn.dialect.name)
        if insert_if_missing is not None:
            conn.execute(insert_if_missing(self._tables.logbooks, book_row))
        elif not self._book_exists(conn, book_row["uuid"]):
            conn.execute(sa.insert(self._tables.logbooks).values(**book_row))

    def _book_exists(self, conn, book_uuid):
        logbooks = self._tables.logbooks
        return conn.execute(sa.select(logbooks.c.uuid)
                            .where(logbooks.c.uuid == book_uuid)).first() is not None

    def _insert_details(self, conn, book_uuid, details):
        t = self._tables
        if not details:
            return
        conn.execute(sa.insert(t.flowdetails),
                     [dict(d.to_dict(), parent_uuid=book_uuid) for d in details])
        atoms = [self._atom_insert(a, d.uuid) for d in details for a in d]
        if atoms:
            conn.execute(sa.insert(t.atomdetails), atoms)
        with self._lock:
            self._known_atoms.update(a["uuid"] for a in atoms)

    # -- reads (see what was written) ---------------------------------

    def read(self, method, *args, **kwargs):
        self.flush()
        with contextlib.closing(self._stock.get_connection()) as conn:
            return getattr(conn, method)(*args, **kwargs)


#: States whose save TaskFlow follows with the task's progress 1.0.
_RUN_ENDS = (states.SUCCESS, states.REVERTED)
_PROGRESS = tf_storage.META_PROGRESS
_NONE = object()


class JournalStorage(taskflow_compat.Storage):
    """TaskFlow's storage unit, minus its retry of every save and the save
    of a progress that reads the same as before.

    TaskFlow retries a save for up to 15 s while the backend raises
    StorageFailure. A journal's saves land in memory and never raise it (a
    fenced run's :class:`exceptions.Fenced` must stop the run at once, not be
    retried), so the retry machinery -- a tenacity call state per save,
    four saves per task -- only cost time: a tenth of the CPU of a flat
    stack's run. The engine swaps it in for runs on a :class:`JournalBackend`.
    """

    def save_flow_detail(self, conn, original_flow_detail, flow_detail):
        original_flow_detail.update(conn.update_flow_details(flow_detail))
        return original_flow_detail

    def save_atom_detail(self, conn, original_atom_detail, atom_detail):
        original_atom_detail.update(conn.update_atom_details(atom_detail))
        return original_atom_detail

    def set_task_progress(self, task_name, progress, details=None):
        # The engine sets 0.0 as every task starts, right after RUNNING:
        # what a task with no progress recorded reads as already. Saving it
        # would clone and journal the atom a second time in one transition.
        if details is None and progress == self.get_task_progress(task_name):
            return
        super().set_task_progress(task_name, progress, details=details)

    def save(self, atom_name, result, state=states.SUCCESS):
        # The engine ends a task's run by saving its result (SUCCESS,
        # REVERTED), then its progress 1.0 (TaskAction.complete_execution,
        # complete_reversion): the atom cloned and journaled twice in one
        # transition. The progress goes with the result's save instead,
        # so the second save finds it set and is skipped (above).
        if state not in _RUN_ENDS:
            return super().save(atom_name, result, state=state)
        with self.lock.write_lock():
            detail = self.atom_detail(atom_name)
            # A save that changes the state writes the detail (TaskDetail.put).
            if (not isinstance(detail, tf_models.TaskDetail) or detail.state == state
                    or detail.meta.get(_PROGRESS) == 1.0):
                return super().save(atom_name, result, state=state)
            before = detail.meta.get(_PROGRESS, _NONE)
            detail.meta[_PROGRESS] = 1.0
            try:
                return super().save(atom_name, result, state=state)
            except BaseException:
                if before is _NONE:
                    detail.meta.pop(_PROGRESS, None)
                else:
                    detail.meta[_PROGRESS] = before
                raise


class _Connection(tf_base.Connection):
    """TaskFlow's connection interface over a :class:`JournalBackend`."""

    def __init__(self, backend):
        self._backend = backend

    @property
    def backend(self):
        return self._backend

    def close(self):
        """Connections are views; the backend owns the state."""

    def validate(self):
        """The stock backend validated the database when it was created."""

    def upgrade(self):
        raise exceptions.NestedflowError("the journal's schema is migrated with the database")

    def clear_all(self):
        raise exceptions.NestedflowError("a traversal run may not clear the journal")

    def destroy_logbook(self, book_uuid):
        raise exceptions.NestedflowError("a traversal run may not destroy a logbook")

    def update_atom_details(self, atom_detail):
        return self._backend.record_atom(atom_detail)

    def update_flow_details(self, flow_detail):
        return self._backend.record_flow(flow_detail)

    def save_logbook(self, book):
        return self._backend.save_logbook(book)

    def get_logbook(self, book_uuid, lazy=False):
        return self._backend.read("get_logbook", book_uuid, lazy=lazy)

    def get_logbooks(self, lazy=False):
        return self._backend.read("get_logbooks", lazy=lazy)

    def get_flows_for_book(self, book_uuid, lazy=False):
        return self._backend.read("get_flows_for_book", book_uuid, lazy=lazy)

    def get_flow_details(self, fd_uuid, lazy=False):
        return self._backend.read("get_flow_details", fd_uuid, lazy=lazy)

    def get_atom_details(self, ad_uuid):
        return self._backend.read("get_atom_details", ad_uuid)

    def get_atoms_for_flow(self, fd_uuid):
        return self._backend.read("get_atoms_for_flow", fd_uuid)
