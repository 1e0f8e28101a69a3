"""Every read and write of nestedflow's state, through oslo.db's enginefacade.

Writes that decide ownership are single compare-and-swap ``UPDATE``
statements whose ``WHERE`` clause carries what the writer believes (the
stack's current traversal, the resource's lock holder and atomic key); a
rowcount of zero means somebody else owns the state now and the caller must
stop. That is the fencing every task relies on after a crash or a pause.
"""

import collections
import threading
import time

import sqlalchemy as sa
from oslo_db.sqlalchemy import enginefacade
from taskflow.persistence.backends import impl_sqlalchemy

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.db import migration, models


class _TaskflowBackend(impl_sqlalchemy.SQLAlchemyBackend):
    """TaskFlow's SQL backend handing out one connection object.

    Its connections are stateless views of the engine (``close`` does
    nothing), but each new one describes the tables anew, which costs more
    than most reads it serves and defeats SQLAlchemy's statement cache.
    """

    _shared = None

    def get_connection(self):
        if self._shared is None:
            self._shared = super().get_connection()
        return self._shared

    def close(self):
        self._shared = None
        super().close()


#: Template versions a process keeps in memory (Database.get_template).
TEMPLATE_CACHE_SIZE = 64

#: Seconds a transaction waits for SQLite's write lock (pysqlite's default).
SQLITE_BUSY_TIMEOUT = 5.0

#: What a resource write's event records (``e_<column>`` parameters).
_EVENT_COLUMNS = ("stack_id", "resource_name", "resource_id", "physical_id", "action",
                  "status", "status_reason", "traversal_id", "engine_id", "timestamp")


#: The columns a new stack's INSERT sets: all but those only a later write
#: fills (a JSON column given None would store JSON null, not SQL NULL).
_STACK_INSERT_COLUMNS = tuple(column.key for column in models.Stack.__table__.columns
                              if column.key != "outputs")


class _Ctx:
    """enginefacade attaches its transaction state to a context object."""


class Database:
    """One state database (any SQLAlchemy URL oslo.db supports)."""

    def __init__(self, url=None):
        self.url = migration.normalize_url(url)
        self._facade = enginefacade.transaction_context()
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
        if self.dialect == "sqlite":
            self._serialize_sqlite_writers(engine)
            self._pool_sqlite_connections(engine, CONF.database.max_pool_size)
        else:
            self._ping_idle_connections(engine, CONF.database.ping_idle_after)
        self._batch_psycopg2_executemany(engine)
        #: Where a transaction is one statement: see _one_statement_engine.
        self._single = self._one_statement_engine(engine)
        self._synced = False
        self._sync_lock = threading.Lock()
        self._change_listeners = []
        self._engine = engine
        self._cas_statements = {}
        self._templates = _TemplateCache(TEMPLATE_CACHE_SIZE)
        events = models.Event.__table__
        self._event_insert_from_params = sa.insert(events).values(
            {name: sa.bindparam(f"e_{name}", type_=events.c[name].type)
             for name in _EVENT_COLUMNS})
        resources = models.Resource.__table__
        self._resource_by_id = sa.select(resources).where(
            resources.c.id == sa.bindparam("w_id"))
        stacks = models.Stack.__table__
        self._stack_by_id = sa.select(stacks).where(stacks.c.id == sa.bindparam("w_id"))
        self._stack_by_name = (
            sa.select(stacks)
            .where(stacks.c.name == sa.bindparam("w_name"), stacks.c.deleted_at.is_(None))
            .order_by(stacks.c.created_at.desc()).limit(1))
        self._resources_of_stack = (
            sa.select(resources).where(resources.c.stack_id == sa.bindparam("w_stack"))
            .order_by(resources.c.id))
        self._current_resources_of_stack = self._resources_of_stack.where(
            resources.c.current.is_(True))
        self._claim = (
            sa.update(stacks)
            .where(stacks.c.id == sa.bindparam("w_id"),
                   stacks.c.current_traversal == sa.bindparam("w_traversal"))
            .values(traversal_owner=sa.bindparam("v_owner"),
                    atomic_key=stacks.c.atomic_key + 1))
        self._template_insert = sa.insert(models.RawTemplate.__table__)
        stack_params = {name: sa.bindparam(f"s_{name}", type_=stacks.c[name].type)
                        for name in _STACK_INSERT_COLUMNS}
        self._stack_insert = sa.insert(stacks).values(stack_params)
        self._stack_insert_if_name_free = sa.insert(stacks).from_select(
            list(_STACK_INSERT_COLUMNS),
            sa.select(*stack_params.values()).where(~sa.exists().where(
                stacks.c.name == sa.bindparam("s_name"), stacks.c.deleted_at.is_(None),
                stacks.c.parent_id.is_(None))))
        self._ownership = sa.select(
            stacks.c.current_traversal, stacks.c.traversal_owner, stacks.c.cancel_requested,
            stacks.c.disable_rollback).where(stacks.c.id == sa.bindparam("w_id"))

    def on_stack_change(self, callback):
        """Call ``callback(stack_id, action, status, stack)`` after a stack's
        state is written: a traversal started, was cancelled, or settled.
        ``stack`` is the row as written (a :class:`models.StackRow`) where
        the write returned it, else None."""
        self._change_listeners.append(callback)

    def _changed(self, stack_id, action, status, stack=None):
        for callback in self._change_listeners:
            callback(stack_id, action, status, stack)

    @staticmethod
    def _serialize_sqlite_writers(engine):
        # A deferred BEGIN that reads and then writes fails at once with
        # "database is locked" when another writer committed meanwhile; an
        # IMMEDIATE transaction takes the write lock up front and so waits
        # (busy timeout) instead. It replaces oslo.db's plain-BEGIN listener
        # (same "in_transaction" marker, which oslo.db clears on commit).
        #
        # This process's own transactions first take their turn on a lock:
        # SQLite's busy handler waits by sleeping 1, 2, 5, 10... ms between
        # tries, so a writer queued behind another one slept well past its
        # release -- most of the time of a flat stack's eight workers. The
        # lock wakes the next one at once. Other processes still meet at
        # SQLite's lock; a transaction the lock cannot start within the
        # busy timeout goes on to it too, and fails there as it would have.
        for listener in list(engine.dispatch.begin):
            sa.event.remove(engine, "begin", listener)
        turn = threading.Lock()
        # The connection whose transaction has the turn, as the pool's proxy
        # and as the DBAPI connection (the dialect is handed the one, the
        # pool's events the other): only its own thread sets or clears it.
        holder = [()]

        def end_turn(connection):
            if any(connection is held for held in holder[0]):
                holder[0] = ()
                turn.release()

        @sa.event.listens_for(engine, "begin")
        def _begin_immediate(conn):
            if "in_transaction" in conn.info:
                return
            proxy = conn.connection
            if turn.acquire(timeout=SQLITE_BUSY_TIMEOUT):
                holder[0] = (proxy, proxy.dbapi_connection)
            try:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            except BaseException:
                end_turn(proxy)
                raise
            conn.info["in_transaction"] = True

        # The turn passes once SQLite's lock is free: after the COMMIT (the
        # "commit" event comes before it), so the wrappers go on the dialect.
        dialect = engine.dialect
        for name in ("do_commit", "do_rollback"):
            def ended(dbapi_connection, _end=getattr(dialect, name)):
                try:
                    _end(dbapi_connection)
                finally:
                    end_turn(dbapi_connection)

            setattr(dialect, name, ended)

        @sa.event.listens_for(engine, "checkin")
        def _returned(dbapi_connection, record):
            # However its transaction ended (reset on return, invalidated),
            # a connection back in the pool keeps no turn.
            end_turn(dbapi_connection)

    @staticmethod
    def _ping_idle_connections(engine, idle_after):
        # oslo.db turns pool_pre_ping on: a SELECT 1 round trip on every
        # checkout, which is every transaction -- a third of the cost of a
        # resource write on PostgreSQL. Only a connection that sat in the
        # pool long enough for the server to have dropped it unnoticed is
        # checked now (SQLAlchemy's pessimistic-disconnect recipe): a
        # connection in steady use learns of a lost server from its next
        # statement, as it would between a ping and that statement anyway,
        # and the disconnect invalidates the whole pool.
        pool = engine.pool
        if not idle_after or not getattr(pool, "_pre_ping", False):
            return
        pool._pre_ping = False
        dialect = engine.dialect

        @sa.event.listens_for(pool, "checkin")
        def _idle_from(dbapi_connection, record):
            if record is not None:
                record.info["idle_from"] = time.monotonic()

        @sa.event.listens_for(pool, "checkout")
        def _ping_if_idle(dbapi_connection, record, proxy):
            idle_from = record.info.get("idle_from")
            if idle_from is None or time.monotonic() - idle_from < idle_after:
                return  # just connected, or in steady use
            try:
                dialect.do_ping(dbapi_connection)
            except dialect.loaded_dbapi.Error as error:
                if dialect.is_disconnect(error, dbapi_connection, None):
                    # The pool drops it and checks out another connection.
                    raise sa.exc.DisconnectionError(str(error)) from error
                raise

    @staticmethod
    def _batch_psycopg2_executemany(engine):
        # psycopg2's executemany() is a round trip per row: the journal's
        # flush of a few hundred atom rows, or a stack's resource edges,
        # waited on hundreds of them. psycopg2's execute_batch sends pages
        # of statements instead. oslo.db takes no dialect arguments, so
        # the mode is set on the dialect before its first connection
        # (initialize() reads it). Nothing here reads the rowcount of an
        # executemany, which batching leaves unreliable.
        dialect = engine.dialect
        if dialect.name != "postgresql" or dialect.driver != "psycopg2":
            return
        from sqlalchemy.dialects.postgresql import psycopg2 as pg_psycopg2

        dialect.executemany_mode = pg_psycopg2.EXECUTEMANY_VALUES_PLUS_BATCH
        dialect.supports_sane_multi_rowcount = False

    @staticmethod
    def _one_statement_engine(engine):
        # psycopg2 opens a transaction with a BEGIN of its own, so a read
        # or a write that is one statement took three round trips (BEGIN,
        # the statement, COMMIT or the pool's ROLLBACK), each releasing and
        # retaking the GIL. Run alone, PostgreSQL commits such a statement
        # just as durably, in the round trip of the statement itself: every
        # resource write, the claim, the settle and the ownership checks
        # are one statement on PostgreSQL. Callers whose transaction holds
        # several statements keep the plain engine.
        #
        # SQLAlchemy switches a pooled connection to autocommit and back by
        # setting psycopg2's isolation level, and setting READ COMMITTED
        # explicitly is itself a round trip (SET default_transaction_...).
        # Going back to the server's default only needs the client-side
        # autocommit flag cleared; other levels go through as before.
        dialect = engine.dialect
        if dialect.name != "postgresql" or dialect.driver != "psycopg2":
            return engine
        set_level = dialect.set_isolation_level

        def set_isolation_level(dbapi_connection, level):
            if level == "AUTOCOMMIT":
                dbapi_connection.autocommit = True
            elif (level == dialect.default_isolation_level
                  and dbapi_connection.isolation_level is None):
                dbapi_connection.autocommit = False
            else:
                set_level(dbapi_connection, level)

        dialect.set_isolation_level = set_isolation_level
        return engine.execution_options(isolation_level="AUTOCOMMIT")

    @staticmethod
    def _pool_sqlite_connections(engine, size):
        # oslo.db gives a SQLite file NullPool: a new connection, with its
        # connect-time setup, for every transaction -- a third of a small
        # transaction's cost. SQLAlchemy's own default for a file database
        # is QueuePool (its connections are made with check_same_thread off
        # for that). Unlimited overflow keeps NullPool's "never wait for a
        # connection"; the pool's event dispatch is carried over, so
        # oslo.db's connect listeners still run on every new connection.
        # A file has no server to drop a connection: no pre-ping.
        old = engine.pool
        if not isinstance(old, sa.pool.NullPool):
            return
        engine.pool = sa.pool.QueuePool(
            old._creator, pool_size=size, max_overflow=-1, recycle=old._recycle,
            reset_on_return=old._reset_on_return, pre_ping=False,
            _dispatch=old.dispatch, dialect=old._dialect)
        old.dispose()

        @sa.event.listens_for(engine, "checkin")
        def _forget_transaction(dbapi_connection, record):
            # The marker now outlives a transaction's connection; a
            # returned connection is rolled back, so the next user must
            # BEGIN again even if this one never committed nor rolled back.
            record.info.pop("in_transaction", None)

    def sync(self):
        """Apply migrations once per process (the embedded engine's first use)."""
        with self._sync_lock:
            if not self._synced:
                migration.db_sync(self.url)
                self._synced = True

    def taskflow_backend(self):
        """TaskFlow's SQL persistence on this database, sharing our engine.

        Sharing the engine gives TaskFlow's writes the same SQLite locking
        discipline as ours instead of failing with "database is locked".
        """
        return _TaskflowBackend({"connection": self.url}, engine=self._facade.writer.get_engine())

    def writer(self):
        return self._facade.writer.using(_Ctx())

    def reader(self):
        return self._facade.reader.using(_Ctx())

    def dispose(self):
        self._facade.writer.get_engine().dispose()

    # -- stacks -------------------------------------------------------------

    def create_stack(self, stack_values, template_values, resource_values,
                     unique_name=False):
        """Store a stack, its template and its resource rows in one transaction;
        returns the stack row as stored.

        ``resource_values`` are dicts whose ``requires`` name other resources;
        they are turned into row ids so the graph survives template changes.
        ``unique_name``: store nothing and raise :class:`exceptions.StackExists`
        if a live top-level stack has the name -- tested by the stack's
        INSERT itself, not by a query of its own.
        """
        now = models.utcnow()
        stack = _full_row(models.Stack.__table__, {**stack_values, "created_at": now})
        with self._engine.begin() as conn:
            template_id = conn.execute(
                self._template_insert, {"created_at": now, **template_values}
            ).inserted_primary_key[0]
            stack["raw_template_id"] = template_id
            params = {f"s_{key}": stack[key] for key in _STACK_INSERT_COLUMNS}
            if unique_name:
                stored = conn.execute(self._stack_insert_if_name_free, params).rowcount
                if stored != 1:
                    raise exceptions.StackExists(stack["name"])
            else:
                conn.execute(self._stack_insert, params)
            self._add_resources(conn, stack["id"], template_id, resource_values)
        self._templates.put(models.RawTemplate(id=template_id, created_at=now,
                                               **template_values))
        return models.StackRow.from_mapping(stack)

    @staticmethod
    def _add_resources(session, stack_id, template_id, resource_values, existing=None):
        """Insert resource rows; ``requires`` names resolve to new rows first,
        then to ``existing`` (name -> id of a current row).

        Core statements, not ORM objects: a thousand-resource stack is one
        INSERT (RETURNING the ids, in order, where the database can) and
        one batch of UPDATEs for the edges, which need those ids.
        """
        if not resource_values:
            return
        table = models.Resource.__table__
        inserted = session.execute(
            sa.insert(table).returning(table.c.id, sort_by_parameter_order=True),
            [{**{k: v for k, v in values.items() if k != "requires"},
              "stack_id": stack_id, "template_id": template_id}
             for values in resource_values])
        new_ids = {values["name"]: row_id
                   for values, (row_id,) in zip(resource_values, inserted, strict=True)}
        ids = {**(existing or {}), **new_ids}
        requires = {name: [] for name in new_ids}
        needed_by = {name: [] for name in new_ids}
        for values in resource_values:
            name = values["name"]
            for dep in values["requires"]:
                if dep in ids:
                    requires[name].append(ids[dep])
                if dep in needed_by:
                    needed_by[dep].append(new_ids[name])
        session.execute(
            sa.update(table).where(table.c.id == sa.bindparam("e_id")).values(
                requires=sa.bindparam("e_requires"), needed_by=sa.bindparam("e_needed_by")),
            [{"e_id": new_ids[name], "e_requires": sorted(requires[name]),
              "e_needed_by": sorted(needed_by[name])} for name in new_ids])

    def begin_update(self, stack_id, expected_traversal, new_traversal, action,
                     template_values, resource_values, **values):
        """Store a new template version and take over the stack for it.

        One transaction: either the new traversal owns the stack with its
        template and the rows of added resources, or nothing changed.
        """
        with self.writer() as session:
            stack = session.get(models.Stack, stack_id)
            tmpl = models.RawTemplate(**template_values)
            session.add(tmpl)
            session.flush()
            existing = {
                row.name: row.id
                for row in session.scalars(
                    sa.select(models.Resource).where(
                        models.Resource.stack_id == stack_id,
                        models.Resource.current.is_(True),
                    )
                )
            }
            self._cas_traversal(
                session, stack_id, expected_traversal, new_traversal, action,
                {"raw_template_id": tmpl.id, "prev_raw_template_id": stack.raw_template_id,
                 **values},
            )
            self._add_resources(session, stack_id, tmpl.id, resource_values, existing)
        self._templates.put(tmpl)
        self._changed(stack_id, action, "IN_PROGRESS")
        return tmpl.id

    def get_stack(self, stack_id):
        with self._single.connect() as conn:
            found = conn.execute(self._stack_by_id, {"w_id": stack_id}).first()
        if found is None:
            raise exceptions.StackNotFound(stack_id)
        return models.StackRow.from_mapping(found._mapping)

    def find_stack(self, name_or_id):
        """By id, else by name among stacks not deleted (newest first)."""
        with self._single.connect() as conn:
            found = conn.execute(self._stack_by_id, {"w_id": name_or_id}).first()
            if found is None:
                found = conn.execute(self._stack_by_name, {"w_name": name_or_id}).first()
        if found is None:
            raise exceptions.StackNotFound(name_or_id)
        return models.StackRow.from_mapping(found._mapping)

    def list_stacks(self, show_nested=False):
        with self.reader() as session:
            query = sa.select(models.Stack).where(models.Stack.deleted_at.is_(None))
            if not show_nested:
                query = query.where(models.Stack.parent_id.is_(None))
            return list(session.scalars(query.order_by(models.Stack.created_at)))

    def count_tree_resources(self, root_id, exclude_stack=None):
        """Current resources of every live stack in the tree rooted at ``root_id``."""
        with self.reader() as session:
            query = (
                sa.select(sa.func.count(models.Resource.id))
                .join(models.Stack, models.Stack.id == models.Resource.stack_id)
                .where(models.Stack.root_id == root_id, models.Stack.deleted_at.is_(None),
                       models.Resource.current.is_(True))
            )
            if exclude_stack is not None:
                query = query.where(models.Stack.id != exclude_stack)
            return session.scalar(query) or 0

    def list_children(self, stack_id):
        with self.reader() as session:
            return list(session.scalars(
                sa.select(models.Stack).where(models.Stack.parent_id == stack_id)
                .order_by(models.Stack.created_at)))

    def get_template(self, template_id):
        """A stored template version. They are never changed or deleted and
        their ids are never reused, so the ones this process stored or
        read last are kept: every traversal of a stack reads its template.
        Callers share what it returns and must not change it."""
        cached = self._templates.get(template_id)
        if cached is not None:
            return cached
        with self.reader() as session:
            tmpl = session.get(models.RawTemplate, template_id)
        if tmpl is not None:
            self._templates.put(tmpl)
        return tmpl

    def begin_traversal(self, stack_id, expected_traversal, new_traversal, action, **values):
        """Atomically make ``new_traversal`` the stack's current one."""
        with self.writer() as session:
            self._cas_traversal(session, stack_id, expected_traversal, new_traversal, action,
                                values)
        self._changed(stack_id, action, "IN_PROGRESS")

    @staticmethod
    def _cas_traversal(session, stack_id, expected_traversal, new_traversal, action, values):
        result = session.execute(
            sa.update(models.Stack)
            .where(
                models.Stack.id == stack_id,
                models.Stack.current_traversal == expected_traversal,
            )
            .values(
                **{
                    "status_reason": "",
                    **values,
                    "current_traversal": new_traversal,
                    "traversal_owner": None,
                    "cancel_requested": None,
                    "action": action,
                    "status": "IN_PROGRESS",
                    "atomic_key": models.Stack.atomic_key + 1,
                    "updated_at": models.utcnow(),
                }
            )
        )
        if result.rowcount != 1:
            raise exceptions.TraversalSuperseded(stack_id, expected_traversal)
        session.add(models.Event(stack_id=stack_id, action=action, status="IN_PROGRESS",
                                 status_reason=values.get("status_reason", ""),
                                 traversal_id=new_traversal))

    def traversal_started_at(self, stack, traversal_id):
        """When ``traversal_id`` of ``stack`` began: its "started" event, or
        the stack's creation for the create that has none."""
        with self.reader() as session:
            started = session.scalar(
                sa.select(sa.func.min(models.Event.timestamp))
                .where(models.Event.stack_id == stack.id,
                       models.Event.traversal_id == traversal_id,
                       models.Event.resource_name.is_(None))
            )
        return started or stack.created_at

    def claim_traversal(self, stack_id, traversal_id, owner):
        """Make ``owner`` (one run of the traversal) the only one allowed to write.

        A later claim fences an earlier run of the same traversal -- e.g. a
        conductor that was paused past its ZooKeeper session.

        Returns the stack as the claim left it: the run builds its flow
        from it (read back in the same transaction where the database
        cannot return it from the UPDATE).
        """
        params = {"w_id": stack_id, "w_traversal": traversal_id, "v_owner": owner}
        with self._single.begin() as conn:
            if self._engine.dialect.update_returning:
                found = conn.execute(self._claim.returning(*models.Stack.__table__.c),
                                     params).first()
            else:
                claimed = conn.execute(self._claim, params).rowcount == 1
                found = (conn.execute(self._stack_by_id, params).first() if claimed
                         else None)
        if found is None:
            raise exceptions.TraversalSuperseded(stack_id, traversal_id)
        return models.StackRow.from_mapping(found._mapping)

    def ownership(self, stack_id):
        """(current traversal, its owner, pending cancel, disable_rollback).

        Core, with the statement built once: every journal flush and every
        wait poll asks this.
        """
        with self._single.connect() as conn:
            row = conn.execute(self._ownership, {"w_id": stack_id}).first()
        if row is None:
            raise exceptions.StackNotFound(stack_id)
        return tuple(row)

    def request_cancel(self, stack_id, traversal_id, mode):
        with self.writer() as session:
            result = session.execute(
                sa.update(models.Stack)
                .where(models.Stack.id == stack_id,
                       models.Stack.current_traversal == traversal_id,
                       models.Stack.status == "IN_PROGRESS")
                .values(cancel_requested=mode, atomic_key=models.Stack.atomic_key + 1)
            )
            if result.rowcount != 1:
                raise exceptions.ActionNotAllowed(
                    f"stack {stack_id} has no traversal in progress to cancel"
                )
        self._changed(stack_id, "CANCEL", mode)

    def set_stack_state(self, stack_id, traversal_id, action, status, reason="", owner=None,
                        **values):
        """Write the stack's state only while ``traversal_id`` (and, if given,
        this run of it) is still current, with its event; returns the stack
        as written where the write can return it (else None).

        Core, one statement on PostgreSQL: every traversal settles here,
        and a waiter wakes only once it has.
        """
        now = models.utcnow()
        values = {"action": action, "status": status, "status_reason": reason,
                  "updated_at": now, **values}
        params = {f"v_{key}": value for key, value in values.items()}
        params.update(w_id=stack_id, w_traversal=traversal_id, w_owner=owner)
        event = {"stack_id": stack_id, "resource_name": None, "resource_id": None,
                 "physical_id": None, "action": action, "status": status,
                 "status_reason": reason, "traversal_id": traversal_id, "engine_id": None,
                 "timestamp": now}
        columns = frozenset(values)
        written = None
        with self._single.begin() as conn:
            if self.dialect == "postgresql":
                params.update({f"e_{key}": value for key, value in event.items()})
                found = conn.execute(self._settle_statement(columns, owner is not None),
                                     params).first()
                if found is None:
                    raise exceptions.TraversalSuperseded(stack_id, traversal_id)
                written = models.StackRow.from_mapping(found._mapping)
            else:
                stmt = self._stack_state_statement(columns, owner is not None)
                if self._engine.dialect.update_returning:
                    found = conn.execute(stmt.returning(*models.Stack.__table__.c),
                                         params).first()
                    ok = found is not None
                    if ok:
                        written = models.StackRow.from_mapping(found._mapping)
                else:
                    ok = conn.execute(stmt, params).rowcount == 1
                if not ok:
                    raise exceptions.TraversalSuperseded(stack_id, traversal_id)
                conn.execute(self._event_insert_from_params,
                             {f"e_{key}": value for key, value in event.items()})
        self._changed(stack_id, action, status, written)
        return written

    def _stack_state_statement(self, columns, with_owner):
        """set_stack_state's compare-and-swap UPDATE of ``columns``."""
        key = ("stack_state", columns, with_owner)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Stack.__table__
            conditions = [table.c.id == sa.bindparam("w_id"),
                          table.c.current_traversal == sa.bindparam("w_traversal")]
            if with_owner:
                conditions.append(table.c.traversal_owner == sa.bindparam("w_owner"))
            stmt = (sa.update(table).where(*conditions)
                    .values({name: sa.bindparam(f"v_{name}", type_=table.c[name].type)
                             for name in columns})
                    .values(atomic_key=table.c.atomic_key + 1))
            self._cas_statements[key] = stmt
        return stmt

    def _settle_statement(self, columns, with_owner):
        """PostgreSQL: set_stack_state's UPDATE and its event in one
        statement (data-modifying CTEs), returning the stack as written."""
        key = ("settle", columns, with_owner)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Stack.__table__
            written = self._stack_state_statement(columns, with_owner).returning(
                *table.c).cte("written")
            events = models.Event.__table__
            event = events.insert().from_select(
                list(_EVENT_COLUMNS),
                sa.select(*(sa.bindparam(f"e_{name}", type_=events.c[name].type)
                            for name in _EVENT_COLUMNS)).select_from(written),
            ).cte("event")
            stmt = sa.select(*(written.c[c.key] for c in table.c)).add_cte(event)
            self._cas_statements[key] = stmt
        return stmt

    def current_traversal(self, stack_id):
        with self.reader() as session:
            value = session.scalar(
                sa.select(models.Stack.current_traversal).where(models.Stack.id == stack_id)
            )
            if value is None:
                raise exceptions.StackNotFound(stack_id)
            return value

    # -- resources ----------------------------------------------------------

    def list_resources(self, stack_id, current_only=True):
        query = (self._current_resources_of_stack if current_only
                 else self._resources_of_stack)
        return self._resource_rows(query, stack_id)

    def _resource_rows(self, query, stack_id):
        with self._single.connect() as conn:
            return [models.ResourceRow.from_mapping(found._mapping)
                    for found in conn.execute(query, {"w_stack": stack_id})]

    def get_resource(self, resource_id):
        with self.reader() as session:
            return session.get(models.Resource, resource_id)

    def list_all_resources(self, stack_id):
        """Every row of the stack that may still own a physical object."""
        return self._resource_rows(self._resources_of_stack, stack_id)

    def add_replacement(self, row, holder, template_id, requires, type_name, traversal_id):
        """A new, not yet current, row (locked by ``holder``) to replace ``row``."""
        with self.writer() as session:
            new = models.Resource(
                stack_id=row.stack_id, name=row.name, type=type_name,
                template_id=template_id, action="INIT", status="COMPLETE",
                requires=sorted(requires), needed_by=[], deletion_policy=row.deletion_policy,
                replaces=row.id, current=False, engine_id=holder,
                traversal_id=traversal_id,
            )
            session.add(new)
            session.flush()
            return new

    def swap_current(self, old, new, holder):
        """Make ``new`` the current version of the resource instead of ``old``.

        Used both ways: a replacement taking over, and a rollback giving the
        original back.

        One transaction with compare-and-swap on both rows: either the
        replacement is current and the original waits for cleanup, or
        nothing changed.
        """
        with self.writer() as session:
            for row, values in ((old, {"current": False, "replaced_by": new.id}),
                                (new, {"current": True, "replaced_by": None})):
                result = session.execute(
                    sa.update(models.Resource)
                    .where(models.Resource.id == row.id,
                           models.Resource.atomic_key == row.atomic_key,
                           models.Resource.engine_id == holder)
                    .values(atomic_key=row.atomic_key + 1, **values)
                )
                if result.rowcount != 1:
                    raise exceptions.ResourceLocked(row.name, "a newer owner")
        for row, values in ((old, {"current": False, "replaced_by": new.id}),
                            (new, {"current": True, "replaced_by": None})):
            for key, value in values.items():
                setattr(row, key, value)
            row.atomic_key += 1

    def set_edges(self, edges):
        """Rewrite requires/needed_by of current rows: ``{id: (requires, needed_by)}``."""
        with self.writer() as session:
            for row_id, (requires, needed_by) in edges.items():
                session.execute(
                    sa.update(models.Resource)
                    .where(models.Resource.id == row_id)
                    .values(requires=sorted(requires), needed_by=sorted(needed_by))
                )

    def lock_resource(self, resource_id, holder, may_steal=None):
        """Take the resource lock for ``holder``; returns the locked row.

        Re-entrant for the same holder. ``may_steal(row)`` decides whether a
        lock held by somebody else is stale (its run is dead or fenced).
        """
        with self.writer() as session:
            row = session.get(models.Resource, resource_id)
            if row is None:
                raise exceptions.ResourceNotFound(None, resource_id)
            if row.engine_id not in (None, holder) and not (may_steal and may_steal(row)):
                raise exceptions.ResourceLocked(row.name, row.engine_id)
            result = session.execute(
                sa.update(models.Resource)
                .where(
                    models.Resource.id == resource_id,
                    models.Resource.atomic_key == row.atomic_key,
                )
                .values(engine_id=holder, atomic_key=row.atomic_key + 1,
                        updated_at=models.utcnow())
            )
            if result.rowcount != 1:
                raise exceptions.ResourceLocked(row.name, "a concurrent writer")
            session.refresh(row)
            return row

    def try_lock_resource(self, resource_id, holder, stack_id, traversal_id, owner=None,
                          cancelled_ok=False, start=None, event=None):
        """Take a free (or our own) resource lock in one statement, only while
        ``traversal_id`` -- run by ``owner``, if given, and not cancelled
        unless ``cancelled_ok`` -- is the stack's current traversal.

        Returns the locked row, or None when any of that does not hold: the
        caller then finds out which (:meth:`lock_resource`, ``ownership``).
        The ownership test shares the lock's statement, so no traversal can
        take over between the two.

        ``start(row)`` may return values to write (as :meth:`update_resource`
        does, with ``event``) in the lock's own transaction: an action's
        ``IN_PROGRESS`` state costs no commit of its own. It may also return
        a list of such writes, each a dict or a callable given the row as
        the writes before it left it (and returning None to stop there):
        an action that touches nothing outside this database runs, and
        records its end, in that same transaction.
        """
        stmt = self._try_lock_statement(bool(owner), cancelled_ok)
        with self._engine.begin() as conn:
            result = conn.execute(stmt, {
                "w_id": resource_id, "w_holder": holder, "w_stack": stack_id,
                "w_traversal": traversal_id, "w_owner": owner, "v_now": models.utcnow()})
            if self._engine.dialect.update_returning:
                found = result.first()
                if found is None:
                    return None
            else:
                if result.rowcount != 1:
                    return None
                found = conn.execute(self._resource_by_id, {"w_id": resource_id}).first()
            # Detached, like every row handed to tasks: they only read it and
            # pass it back to the compare-and-swap writes.
            row = models.ResourceRow.from_mapping(found._mapping)
            merged, states = _run_steps(models.ResourceRow.copy(row), start)
            if merged:
                self._cas_write(conn, row, holder, merged, event, states)
                _applied(row, merged)
        return row

    def write_free_resource(self, row, holder, stack_id, traversal_id, owner=None,
                            cancelled_ok=False, start=None, event=None):
        """:meth:`try_lock_resource` for a caller that read ``row`` earlier
        and whose ``start`` writes end by releasing the lock.

        If the row is still free and unchanged since (same atomic key) and
        ``traversal_id`` still the stack's current traversal as
        :meth:`try_lock_resource` requires, the writes land in one
        statement that takes the lock and gives it back. Returns the row as
        written, or None when nothing was (the caller then locks the row).
        """
        if row.engine_id is not None:
            return None
        view = models.ResourceRow.copy(row)
        merged, states = _run_steps(view, start)
        if not merged or merged.get("engine_id", holder) is not None:
            return None
        ownership = {"w_stack": stack_id, "w_traversal": traversal_id, "w_owner": owner,
                     "free": (bool(owner), cancelled_ok)}
        try:
            with self._single.begin() as conn:
                self._cas_write(conn, row, holder, merged, event, states, ownership)
        except exceptions.ResourceLocked:
            return None
        return _applied(models.ResourceRow.copy(row), merged)

    def _try_lock_statement(self, with_owner, cancelled_ok):
        key = ("try_lock", with_owner, cancelled_ok)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            res = models.Resource.__table__
            stmt = (
                sa.update(res)
                .where(res.c.id == sa.bindparam("w_id"),
                       sa.or_(res.c.engine_id.is_(None),
                              res.c.engine_id == sa.bindparam("w_holder")),
                       self._owns_clause(with_owner, cancelled_ok))
                .values(engine_id=sa.bindparam("w_holder"), atomic_key=res.c.atomic_key + 1,
                        updated_at=sa.bindparam("v_now"))
            )
            if self._engine.dialect.update_returning:
                # The locked row comes back with the lock: no second read.
                stmt = stmt.returning(*res.c)
            self._cas_statements[key] = stmt
        return stmt

    def release_lock(self, resource_id, holder):
        """Release the lock of ``holder`` on a row, if it still holds it."""
        with self.writer() as session:
            session.execute(
                sa.update(models.Resource)
                .where(models.Resource.id == resource_id, models.Resource.engine_id == holder)
                .values(engine_id=None, atomic_key=models.Resource.atomic_key + 1,
                        updated_at=models.utcnow())
            )

    def update_resource(self, row, holder, event=None, release=False, **values):
        """Compare-and-swap write of a locked resource row; returns the new key.

        ``row`` is the caller's last view of the resource; the write happens
        only if nobody wrote it since (same atomic key, same lock holder).
        ``event``: also record the new state as an event by that engine id.
        Every resource action runs this twice or more, so it is plain Core
        with statements built once per set of columns, not the ORM.
        """
        if release:
            values["engine_id"] = None
        with self._single.begin() as conn:
            self._cas_write(conn, row, holder, values, event)
        return _applied(row, values)

    def _cas_write(self, conn, row, holder, values, event, states=None, ownership=None):
        """update_resource's write, in the caller's transaction; ``row`` is
        left as it was (apply ``values`` once committed: :func:`_applied`).

        ``states``: the successive writes ``values`` merges, each recorded
        as an event of its own (default: ``values`` alone). ``ownership``
        (see :meth:`write_free_resource`): the row must be free instead of
        locked by ``holder``, and the traversal still the stack's.
        """
        values["updated_at"] = models.utcnow()
        params = {f"v_{key}": value for key, value in values.items()}
        params.update(w_id=row.id, w_key=row.atomic_key, w_holder=holder,
                      v_atomic_key=row.atomic_key + 1)
        columns = frozenset(values)
        free = None
        if ownership is not None:
            free = ownership["free"]
            params.update(w_stack=ownership["w_stack"], w_traversal=ownership["w_traversal"],
                          w_owner=ownership["w_owner"])
        if event is None:
            result = conn.execute(self._cas_statement(columns, free), params)
        else:
            events = self._event_params(row, states or [values], event)
            if self.dialect == "postgresql":
                # One statement: the events are inserted only if the write
                # happened, so its row count is the write's.
                for i, fields in enumerate(events):
                    params.update({f"e{i}_{name}": value for name, value in fields.items()})
                result = conn.execute(
                    self._cas_with_events_statement(columns, len(events), free), params)
                # Several events: the insert's count; one per event written.
                written = result.rowcount == len(events)
            else:
                result = conn.execute(self._cas_statement(columns, free), params)
                written = result.rowcount == 1
                if written:
                    conn.execute(self._event_insert_from_params,
                                 [{f"e_{name}": value for name, value in fields.items()}
                                  for fields in events])
            if not written:
                raise exceptions.ResourceLocked(row.name, "a newer owner")
            return
        if result.rowcount != 1:
            raise exceptions.ResourceLocked(row.name, "a newer owner")

    @staticmethod
    def _event_params(row, states, event):
        """The event columns of each of ``states``, applied one after another to ``row``."""
        now = models.utcnow()
        current = {}
        fields = []
        for values in states:
            current.update(values)
            fields.append({
                "stack_id": row.stack_id,
                "resource_name": row.name,
                "resource_id": row.id,
                "physical_id": current.get("physical_id", row.physical_id),
                "action": current.get("action", row.action),
                "status": current.get("status", row.status),
                "status_reason": values.get("status_reason", ""),
                "traversal_id": current.get("traversal_id", row.traversal_id),
                "engine_id": event,
                "timestamp": now,
            })
        return fields

    def _cas_with_events_statement(self, columns, count, free=None):
        """PostgreSQL: the compare-and-swap write and its events in one
        statement (a data-modifying CTE), a round trip less per write."""
        key = ("with_events", columns, count, free)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            written = self._cas_statement(columns, free).returning(
                models.Resource.__table__.c.id).cte("written")
            events = models.Event.__table__
            # UNION ALL keeps the events in order: their ids follow it.
            rows = [sa.select(*(sa.bindparam(f"e{i}_{name}", type_=events.c[name].type)
                                for name in _EVENT_COLUMNS)).select_from(written)
                    for i in range(count)]
            stmt = events.insert().from_select(
                list(_EVENT_COLUMNS), rows[0] if count == 1 else sa.union_all(*rows))
            self._cas_statements[key] = stmt
        return stmt

    def _cas_statement(self, columns, free=None):
        """The compare-and-swap UPDATE of ``columns`` of a row locked by
        ``w_holder``; or, with ``free`` = (with owner, cancelled ok), of a
        free row while the traversal owns the stack (as the lock requires)."""
        key = (columns, free)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Resource.__table__
            if free is None:
                held = [table.c.engine_id == sa.bindparam("w_holder")]
            else:
                held = [table.c.engine_id.is_(None), self._owns_clause(*free)]
            stmt = (
                sa.update(table)
                .where(table.c.id == sa.bindparam("w_id"),
                       table.c.atomic_key == sa.bindparam("w_key"), *held)
                .values({name: sa.bindparam(f"v_{name}", type_=table.c[name].type)
                         for name in (*columns, "atomic_key")})
            )
            self._cas_statements[key] = stmt
        return stmt

    @staticmethod
    def _owns_clause(with_owner, cancelled_ok):
        """The stack's current traversal is ``w_traversal`` (run by
        ``w_owner``, and not cancelled unless ``cancelled_ok``)."""
        stack = models.Stack.__table__
        owns = [stack.c.id == sa.bindparam("w_stack"),
                stack.c.current_traversal == sa.bindparam("w_traversal")]
        if with_owner:
            owns.append(stack.c.traversal_owner == sa.bindparam("w_owner"))
        if not cancelled_ok:
            owns.append(stack.c.cancel_requested.is_(None))
        return sa.exists().where(*owns)

    # -- events -------------------------------------------------------------

    def add_event(self, stack_id, resource_name, action, status, reason, **values):
        with self.writer() as session:
            session.add(models.Event(stack_id=stack_id, resource_name=resource_name,
                                     action=action, status=status, status_reason=reason,
                                     **values))

    def list_events(self, stack_id):
        with self.reader() as session:
            return list(
                session.scalars(
                    sa.select(models.Event)
                    .where(models.Event.stack_id == stack_id)
                    .order_by(models.Event.id)
                )
            )


class _TemplateCache:
    """The last ``size`` template versions stored or read (thread-safe)."""

    def __init__(self, size):
        self._size = size
        self._rows = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, template_id):
        with self._lock:
            row = self._rows.get(template_id)
            if row is not None:
                self._rows.move_to_end(template_id)
            return row

    def put(self, row):
        with self._lock:
            self._rows[row.id] = row
            self._rows.move_to_end(row.id)
            while len(self._rows) > self._size:
                self._rows.popitem(last=False)


def _full_row(table, values):
    """Every column of a new ``table`` row: ``values``, else the column's
    constant default, else None (callable defaults must be in ``values``)."""
    row = {}
    for column in table.columns:
        if column.key in values:
            row[column.key] = values[column.key]
        elif column.default is not None and column.default.is_scalar:
            row[column.key] = column.default.arg
        else:
            row[column.key] = None
    return row


def _run_steps(view, start):
    """The writes ``start(view)`` asks for (see :meth:`Database.try_lock_resource`),
    merged into one, and each of them (for its event). A callable step sees
    ``view`` as the earlier steps left it; ``view`` is changed."""
    steps = start(view) if start is not None else None
    merged, states = {}, []
    for step in (steps if isinstance(steps, list) else [steps] if steps else []):
        values = step(view) if callable(step) else step
        if not values:
            break
        states.append(dict(values))
        merged.update(values)
        for key, value in values.items():
            setattr(view, key, value)
    return merged, states


def _applied(row, values):
    """``row`` as a compare-and-swap write of ``values`` left it."""
    for key, value in values.items():
        setattr(row, key, value)
    row.atomic_key += 1
    return row
