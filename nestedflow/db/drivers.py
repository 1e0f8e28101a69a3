"""How nestedflow tunes SQLAlchemy's engine and the database drivers under
oslo.db: each function removes a per-transaction cost measured on the bench
(see doc/source/performance.rst), and :func:`tune` applies those that fit
the engine's dialect."""

import threading
import time

import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import precompiled, sqlalchemy_compat

#: Seconds a transaction waits for SQLite's write lock (pysqlite's default).
SQLITE_BUSY_TIMEOUT = 5.0


#: Drivers a URL naming none (``postgresql://``) may use, best first: the
#: ones nestedflow's extras install and tunes for lead. SQLAlchemy's own
#: default (psycopg 3 for ``postgresql`` from 2.1, mysqlclient for
#: ``mysql``) is neither.
_DRIVERS = {"postgresql": ("psycopg2", "psycopg", "pg8000"),
            "mysql": ("pymysql", "mysqldb", "mysqlconnector"),
            "mariadb": ("pymysql", "mysqldb", "mysqlconnector")}
_EXTRAS = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}


def _installed(url):
    try:
        url.get_dialect().import_dbapi()
    except ImportError:
        return False
    return True


def choose_driver(url):
    """``url`` (a SQLAlchemy URL) with an installed driver: the first of
    :data:`_DRIVERS` when it names none; DatabaseUnavailable naming the extra
    to install when the one it names (or every candidate) is missing."""
    backend = url.get_backend_name()
    if backend == "sqlite":
        return url
    if url.drivername == backend and backend in _DRIVERS:
        for driver in _DRIVERS[backend]:
            candidate = url.set(drivername=f"{backend}+{driver}")
            if _installed(candidate):
                return candidate
        wanted = f"{backend}+{_DRIVERS[backend][0]}"
    elif _installed(url):
        return url
    else:
        wanted = url.drivername
    extra = _EXTRAS.get(backend)
    hint = f"pip install 'nestedflow[{extra}]'" if extra else "install its driver"
    raise exceptions.DatabaseUnavailable(
        f"cannot use the database URL {url.render_as_string()}: driver {wanted!r} is not "
        f"installed ({hint})")


def tune(engine, pool_conf):
    """Tune ``engine`` (oslo.db's, before its first use) for its dialect;
    returns the engine for transactions of one statement
    (:func:`one_statement_engine`)."""
    if engine.dialect.name == "sqlite":
        serialize_sqlite_writers(engine)
        pool_sqlite_connections(engine, pool_conf.max_pool_size)
    else:
        ping_idle_connections(engine, pool_conf.ping_idle_after)
        if pool_conf.prepared_statements:
            precompiled.prepare_on(engine)
    batch_psycopg2_executemany(engine)
    return one_statement_engine(engine)


def serialize_sqlite_writers(engine):
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
            # On the driver's connection: SQLAlchemy's statement machinery
            # (events, result set-up) cost more than the BEGIN itself, on
            # every transaction -- 7% of a mixed update's CPU.
            # A failure (the lock busy past the timeout) is tried once more
            # the usual way, to surface as SQLAlchemy's and oslo.db's error.
            try:
                proxy.driver_connection.execute("BEGIN IMMEDIATE")
            except engine.dialect.loaded_dbapi.Error:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            end_turn(proxy)
            raise
        conn.info["in_transaction"] = True

    # The turn passes once SQLite's lock is free: after the COMMIT (the
    # "commit" event comes before it), so the wrappers go on the dialect.
    sqlalchemy_compat.after_transaction_end(engine.dialect, end_turn)

    @sa.event.listens_for(engine, "checkin")
    def _returned(dbapi_connection, record):
        # However its transaction ended (reset on return, invalidated),
        # a connection back in the pool keeps no turn.
        end_turn(dbapi_connection)


def ping_idle_connections(engine, idle_after):
    # oslo.db turns pool_pre_ping on: a SELECT 1 round trip on every
    # checkout, which is every transaction -- a third of the cost of a
    # resource write on PostgreSQL. Only a connection that sat in the
    # pool long enough for the server to have dropped it unnoticed is
    # checked now (SQLAlchemy's pessimistic-disconnect recipe): a
    # connection in steady use learns of a lost server from its next
    # statement, as it would between a ping and that statement anyway,
    # and the disconnect invalidates the whole pool.
    pool = engine.pool
    if not idle_after or not sqlalchemy_compat.take_over_pre_ping(pool):
        return
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


def batch_psycopg2_executemany(engine):
    # psycopg2's executemany() is a round trip per row: the journal's
    # flush of a few hundred atom rows, or a stack's resource edges,
    # waited on hundreds of them. psycopg2's execute_batch sends pages
    # of statements instead. oslo.db takes no dialect arguments, so
    # the mode is set on the dialect before its first connection
    # (initialize() reads it). Nothing here reads the rowcount of an
    # executemany, which batching leaves unreliable.
    dialect = engine.dialect
    if dialect.name == "postgresql" and dialect.driver == "psycopg2":
        sqlalchemy_compat.batch_executemany(dialect)


def one_statement_engine(engine):
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

    def switch_isolation_level(dbapi_connection, level, stock):
        if level == "AUTOCOMMIT":
            dbapi_connection.autocommit = True
        elif (level == dialect.default_isolation_level
              and dbapi_connection.isolation_level is None):
            dbapi_connection.autocommit = False
        else:
            stock(dbapi_connection, level)

    sqlalchemy_compat.replace_isolation_level_setter(dialect, switch_isolation_level)
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def pool_sqlite_connections(engine, size):
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
    engine.pool = sqlalchemy_compat.queue_pool_like(old, size)
    old.dispose()

    @sa.event.listens_for(engine, "checkin")
    def _forget_transaction(dbapi_connection, record):
        # The marker now outlives a transaction's connection; a
        # returned connection is rolled back, so the next user must
        # BEGIN again even if this one never committed nor rolled back.
        record.info.pop("in_transaction", None)



def bound_network_waits(engine, idle):
    """PostgreSQL (psycopg2): a connection whose peer went silent -- a
    partition, a server host gone -- is given up within about ``idle``
    seconds instead of TCP's retransmission back-off (which, after a cut of
    ten seconds, waits several more seconds past the heal before it tries
    again), and a new connection attempt within 2 s. The statement then
    fails as a disconnect and db.retrying tries it again on a new
    connection, so a run goes on within seconds of its link healing
    (tests/functional/test_partitions.py). Values the URL sets are kept."""
    if engine.dialect.driver != "psycopg2":
        return
    user_timeout_ms = max(1000, int((idle or 10.0) * 1000))

    @sa.event.listens_for(engine, "do_connect")
    def _bounded(dialect, conn_rec, cargs, cparams):
        cparams.setdefault("connect_timeout", 2)
        cparams.setdefault("tcp_user_timeout", user_timeout_ms)
        cparams.setdefault("keepalives", 1)
        cparams.setdefault("keepalives_idle", max(1, user_timeout_ms // 2000))
        cparams.setdefault("keepalives_interval", 1)
        cparams.setdefault("keepalives_count", 3)
