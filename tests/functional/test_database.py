"""The state database's connection handling on a SQLite file."""

import sqlalchemy as sa

from nestedflow.db import api


def _dbapi_connection(session):
    return session.connection().connection.dbapi_connection


def test_sqlite_connections_are_reused_and_keep_oslo_db_setup(sqlite_url):
    db = api.Database(sqlite_url)
    db.sync()
    try:
        with db.writer() as session:
            first = _dbapi_connection(session)
        with db.reader() as session:
            assert _dbapi_connection(session) is first
            # oslo.db's connect listener still ran: it adds REGEXP.
            assert session.execute(sa.text("SELECT 'nested' REGEXP 'st'")).scalar() == 1
    finally:
        db.dispose()


def test_a_pooled_connection_never_skips_its_begin(sqlite_url):
    """oslo.db marks a connection in a transaction and skips BEGIN while the
    mark is there; a mark left by an earlier user of a pooled connection
    must not turn the next user's statements into autocommits."""
    db = api.Database(sqlite_url)
    db.sync()
    engine = db._engine
    try:
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            conn.info["in_transaction"] = True  # left behind, never ended
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection is raw
            conn.exec_driver_sql("SELECT 1")
            assert raw.in_transaction
    finally:
        db.dispose()
