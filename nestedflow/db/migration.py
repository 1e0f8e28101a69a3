"""Schema management: ``nestedflow db sync`` and the embedded engine's first use."""

import contextlib
import os

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from taskflow.persistence import backends as tf_backends

from nestedflow.conf import database as db_conf

_MIGRATIONS = os.path.join(os.path.dirname(__file__), "migrations")


def normalize_url(url):
    """The URL every component uses: default SQLite file, with a busy timeout."""
    url = url or db_conf.default_url()
    parsed = sa.engine.make_url(url)
    if parsed.drivername.startswith("sqlite") and parsed.database not in (None, "", ":memory:"):
        os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
        if "timeout" not in parsed.query:
            # Conductors, the CLI and TaskFlow's own persistence share one
            # file; wait for the writer instead of failing with "locked".
            parsed = parsed.update_query_dict({"timeout": "60"})
    return parsed.render_as_string(hide_password=False)


def _alembic_config(connection):
    cfg = Config(os.path.join(_MIGRATIONS, "alembic.ini"))
    cfg.set_main_option("script_location", _MIGRATIONS)
    cfg.attributes["connection"] = connection
    return cfg


def db_sync(url=None):
    """Bring nestedflow's tables and TaskFlow's logbook tables up to date."""
    url = normalize_url(url)
    engine = sa.create_engine(url)
    try:
        if engine.dialect.name == "sqlite":
            # WAL lets readers (the CLI, `wait`) run beside the writer. The
            # mode is stored in the file, and cannot change inside a transaction.
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), "head")
    finally:
        engine.dispose()
    backend = tf_backends.fetch({"connection": url})
    try:
        with contextlib.closing(backend.get_connection()) as conn:
            conn.upgrade()
    finally:
        backend.close()
    _index_journal(url)
    return url


#: Indexes TaskFlow's schema lacks: (table, column) -> index name.
JOURNAL_INDEXES = {
    ("flowdetails", "parent_uuid"): "ix_nf_flowdetails_parent_uuid",
    ("atomdetails", "parent_uuid"): "ix_nf_atomdetails_parent_uuid",
}


def _index_journal(url):
    """Index the journal's parent links.

    TaskFlow looks a logbook's flow details and a flow detail's atoms up by
    ``parent_uuid`` and its schema has no index there (MySQL makes one for
    the foreign key; PostgreSQL and SQLite do not): every run of a
    traversal, which reads its stack's flow details and resumes from the
    latest one's atoms, would scan every flow and atom detail ever kept.
    """
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            inspector = sa.inspect(conn)
            for (table, column), name in JOURNAL_INDEXES.items():
                if any(index["column_names"][:1] == [column]
                       for index in inspector.get_indexes(table)):
                    continue
                conn.execute(sa.text(f"CREATE INDEX {name} ON {table} ({column})"))
    finally:
        engine.dispose()


def make_revision(message):
    """Developer helper: autogenerate a migration against a scratch SQLite."""
    engine = sa.create_engine("sqlite://")
    with engine.begin() as conn:
        cfg = _alembic_config(conn)
        command.upgrade(cfg, "head")
        command.revision(cfg, message=message, autogenerate=True)
