"""Every use nestedflow makes of SQLAlchemy's private names, in one place.

:mod:`nestedflow.db.drivers` tunes the engine oslo.db builds, each tuning
removing a per-transaction cost measured on the bench (its comments and
doc/source/performance.rst give the numbers). oslo.db builds the engine
and takes no pool or dialect arguments for these, so the tunings change
the pool and the dialect after the fact, which SQLAlchemy offers no public
way to do. The functions here are those changes; :data:`NAMES` lists what
they rely on, checked when this module is imported
(:func:`nestedflow.dependency_check.check`).
"""

import sqlalchemy as sa

from nestedflow import dependency_check

#: The SQLAlchemy versions these hooks were written for and tested with
#: (setup.cfg bounds the requirement to the same range).
SUPPORTED = "SQLAlchemy>=2.0.30,<2.2"

NAMES = (
    # Dialect methods replaced on one engine's dialect instance.
    ("sqlalchemy.engine.default", "DefaultDialect", "do_commit"),
    ("sqlalchemy.engine.default", "DefaultDialect", "do_rollback"),
    ("sqlalchemy.engine.default", "DefaultDialect", "set_isolation_level"),
    # A pool's settings, read to rebuild it and to turn pre-ping off.
    ("sqlalchemy.pool.base", "Pool", "_pre_ping"),
    ("sqlalchemy.pool.base", "Pool", "_creator"),
    ("sqlalchemy.pool.base", "Pool", "_recycle"),
    ("sqlalchemy.pool.base", "Pool", "_reset_on_return"),
    ("sqlalchemy.pool.base", "Pool", "_dialect"),
    ("sqlalchemy.pool.base", "Pool", "_dispatch"),
)

#: psycopg2's executemany mode, set after the dialect was made: checked
#: when a PostgreSQL engine is first tuned (:func:`batch_executemany`), so
#: that a command on SQLite does not import the PostgreSQL dialect for it.
PSYCOPG2_NAMES = (
    ("sqlalchemy.dialects.postgresql.psycopg2", None, "EXECUTEMANY_VALUES_PLUS_BATCH"),
    ("sqlalchemy.dialects.postgresql.psycopg2", "PGDialect_psycopg2", "executemany_mode"),
)
_psycopg2_checked = []


def after_transaction_end(dialect, callback):
    """Call ``callback(dbapi_connection)`` once each COMMIT or ROLLBACK of
    ``dialect`` returned. The engine's "commit" and "rollback" events come
    before the statement, too early to know the database's lock is free."""
    for name in ("do_commit", "do_rollback"):
        def ended(dbapi_connection, _end=getattr(dialect, name)):
            try:
                _end(dbapi_connection)
            finally:
                callback(dbapi_connection)

        setattr(dialect, name, ended)


def replace_isolation_level_setter(dialect, setter):
    """Set isolation levels through ``setter(dbapi_connection, level, stock)``,
    ``stock`` being the dialect's own setter."""
    stock = dialect.set_isolation_level

    def set_isolation_level(dbapi_connection, level):
        setter(dbapi_connection, level, stock)

    dialect.set_isolation_level = set_isolation_level


def take_over_pre_ping(pool):
    """Turn the pool's ping on every checkout off; returns whether it was on
    (the caller then pings as it sees fit). oslo.db sets ``pool_pre_ping``
    and has no option to leave it off."""
    if not getattr(pool, "_pre_ping", False):
        return False
    pool._pre_ping = False
    return True


def queue_pool_like(pool, size):
    """A QueuePool making connections as ``pool`` does -- same creator,
    recycle and reset settings, and the same event listeners (oslo.db's
    connect-time setup) -- keeping ``size`` connections, never waiting for
    one (unlimited overflow), not pinging them."""
    return sa.pool.QueuePool(
        pool._creator, pool_size=size, max_overflow=-1, recycle=pool._recycle,
        reset_on_return=pool._reset_on_return, pre_ping=False,
        _dispatch=pool.dispatch, dialect=pool._dialect)


def batch_executemany(dialect):
    """psycopg2: send an executemany() as pages of statements (before the
    dialect's first connection, whose initialize() reads the mode)."""
    from sqlalchemy.dialects.postgresql import psycopg2 as pg_psycopg2

    if not _psycopg2_checked:
        dependency_check.check(PSYCOPG2_NAMES, SUPPORTED, "SQLAlchemy")
        _psycopg2_checked.append(True)
    dialect.executemany_mode = pg_psycopg2.EXECUTEMANY_VALUES_PLUS_BATCH
    # Batching leaves an executemany's row count unreliable; nothing here reads it.
    dialect.supports_sane_multi_rowcount = False


dependency_check.check(NAMES, SUPPORTED, "SQLAlchemy")
