"""Every read and write of nestedflow's state, through oslo.db's enginefacade.

Writes that decide ownership are single compare-and-swap ``UPDATE``
statements whose ``WHERE`` clause carries what the writer believes (the
stack's current traversal, the resource's lock holder and atomic key); a
rowcount of zero means somebody else owns the state now and the caller must
stop. That is the fencing every task relies on after a crash or a pause.
"""

import contextlib
import threading

from oslo_db.sqlalchemy import enginefacade

from nestedflow.conf import CONF
from nestedflow.db import drivers, fencing, group_commit, kept_connections, migration, retrying
from nestedflow.db.drivers import SQLITE_BUSY_TIMEOUT
from nestedflow.db.events import EventStore
from nestedflow.db.heartbeats import HeartbeatStore
from nestedflow.db.resources import ResourceStore
from nestedflow.db.signals import SignalStore
from nestedflow.db.stacks import StackStore
from nestedflow.db.templates import TEMPLATE_CACHE_SIZE, TemplateCache

__all__ = ["SQLITE_BUSY_TIMEOUT", "Database"]


#: Connections kept out of the pool for resource writes on PostgreSQL
#: (db.kept_connections), in autocommit and not, each: about as many as
#: write at once in a busy process. Fewer where [database] max_pool_size
#: is under 8 of them.
KEPT_CONNECTIONS = 2


class _Ctx:
    """enginefacade attaches its transaction state to a context object."""


class Database(retrying.Guarded, StackStore, ResourceStore, EventStore, HeartbeatStore,
               SignalStore):
    """One state database (any SQLAlchemy URL oslo.db supports).

    A facade over one module per concern: :mod:`.stacks` (stacks, templates,
    traversals), :mod:`.resources` (resource rows and their locks),
    :mod:`.events`; :mod:`.drivers` tunes the engine they share.
    """

    # Every other public method waits at the process's session gate, if it
    # has one (db.session_gate), and is tried again when the server dropped
    # the connection under it (db.retrying): a restarted or failed-over
    # database must not fail the stacks in flight, nor the requests and
    # daemons of this process. An ambiguous commit tried again finds its
    # own row or its own compare-and-swap (stacks.lifecycle).
    UNGUARDED = frozenset({
        # Transaction scopes: the caller's block runs inside them, and only
        # the caller can run it again.
        "reader", "writer", "begin", "connect", "transaction",
        # Set-up and shut-down: migrations report their own failure once;
        # listeners and the TaskFlow backend are registered, not executed.
        "sync", "dispose", "on_stack_change", "on_resource_events",
    })

    def __init__(self, url=None):
        self.url = migration.normalize_url(url)
        self._facade = enginefacade.transaction_context()
        #: Where every call waits first (:mod:`nestedflow.db.session_gate`):
        #: a conductor's, while its ZooKeeper session is in doubt.
        self.gate = None
        pool = CONF.database
        # thread_checkin: oslo.db calls sleep(0) whenever a connection goes
        # back to the pool, to let eventlet's green threads run. nestedflow
        # runs real threads, where it gives up the GIL only to queue for it
        # again behind every busy thread -- up to a switch interval (5 ms)
        # per transaction.
        self._facade.configure(connection=self.url, max_retries=0,
                               max_pool_size=pool.max_pool_size,
                               max_overflow=pool.max_overflow, pool_timeout=pool.pool_timeout,
                               thread_checkin=False)
        engine = self._facade.writer.get_engine()
        self.dialect = engine.dialect.name
        #: Where a transaction is one statement: see drivers.one_statement_engine.
        self._single = drivers.tune(engine, CONF.database)
        limits = fencing.session_limits(CONF)
        fencing.apply_session_limits(engine, *limits)
        drivers.bound_network_waits(engine, limits[0])
        # oslo.db connected once to test the URL, before the limits were
        # set up: that connection must not be handed out.
        engine.pool.dispose()
        self._synced = False
        self._sync_lock = threading.Lock()
        self._change_listeners = []
        self._last_change_listeners = []
        self._event_listeners = []
        self._engine = engine
        # SQLite's one writer commits the small writes of many threads
        # together: see db.group_commit.
        self._group = group_commit.GroupCommit(engine) if self.dialect == "sqlite" else None
        # PostgreSQL's resource writes reuse connections: see
        # db.kept_connections. By ``single``: in autocommit or not. A
        # quarter of the pool at most, none from a small one: the kept
        # ones are not there for other transactions.
        kept = min(KEPT_CONNECTIONS, (pool.max_pool_size or 0) // 8)
        self._kept = ({single: kept_connections.KeptConnections(
                           self._single if single else engine, kept,
                           pool.ping_idle_after) for single in (True, False)}
                      if self._single is not engine and kept else None)
        self._cas_statements = {}
        self._templates = TemplateCache(TEMPLATE_CACHE_SIZE)
        self._build_event_statements()
        self._build_resource_statements()
        self._build_stack_statements()

    @property
    def sql_engine(self):
        """The SQLAlchemy engine every statement of this process goes
        through (TaskFlow's persistence included)."""
        return self._engine

    def sync(self):
        """Apply missing migrations once per process (the embedded engine's
        first use); a database already current costs one query."""
        with self._sync_lock:
            if not self._synced:
                if not migration.is_current(self._facade.writer.get_engine()):
                    migration.db_sync(self.url)
                self._synced = True

    def writer(self):
        return self._facade.writer.using(_Ctx())

    def begin(self):
        """A Core transaction (``with db.begin() as conn``): for writes made
        many times per resource, where the ORM session's unit of work costs
        more than the statements."""
        return self._engine.begin()

    def transaction(self, work, single=True):
        """``work(conn)`` in a Core transaction of its own; its result, once
        committed. ``single``: the work is one statement, which runs in
        autocommit on PostgreSQL (drivers.one_statement_engine): one round
        trip where ``BEGIN``, the statement and ``COMMIT`` were three. On
        SQLite the transaction may be shared with other threads' work,
        committed once (:mod:`.group_commit`, which says what ``work`` may
        do); on PostgreSQL it runs on a connection kept from the last
        (:mod:`.kept_connections`)."""
        if self._group is not None:
            return self._group.run(work)
        if self._kept is not None:
            return self._kept[single].run(work)
        with (self._single if single else self._engine).begin() as conn:
            return work(conn)

    def reader(self):
        return self._facade.reader.using(_Ctx())

    @contextlib.contextmanager
    def connect(self):
        """A Core connection (``with db.connect() as conn``) for reads of
        one statement each, which run in autocommit where that saves round
        trips (drivers.one_statement_engine): an ORM session and a
        transaction cost more than such a read."""
        with self._single.connect() as conn:
            if self.dialect != "sqlite":
                yield conn
                return
            # A read needs neither SQLite's write lock nor this process's
            # turn at it (drivers.serialize_sqlite_writers): without a
            # BEGIN, pysqlite reads outside any transaction. The marker
            # lives on the pooled connection, so it goes with this read.
            conn.info["in_transaction"] = True
            try:
                yield conn
            finally:
                conn.info.pop("in_transaction", None)

    def dispose(self):
        for kept in (self._kept or {}).values():
            kept.clear()
        self._facade.writer.get_engine().dispose()
