"""Schema management: ``nestedflow db sync`` and the embedded engine's first use."""

import contextlib
import os
import re
import sys

import platformdirs
import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import drivers

_MIGRATIONS = os.path.join(os.path.dirname(__file__), "migrations")
_VERSION_TABLE = "nestedflow_alembic_version"
_REVISION_LINE = re.compile(r"""^(down_revision|revision)\s*=\s*["']?([^"'\s]+)["']?""",
                            re.MULTILINE)


# Not in nestedflow.conf.database, the [database] options' module: reading
# stacks with --db-url or $NESTEDFLOW_DB_URL given does not import
# oslo.config (0.03 s of CPU, most of it oslo_config.types importing
# rfc3986 and netaddr).
def default_url():
    """SQLite file in the user's data directory (NESTEDFLOW_DB_URL overrides)."""
    url = os.environ.get("NESTEDFLOW_DB_URL")
    if url:
        return url
    return "sqlite:///" + os.path.join(default_data_dir(), "nestedflow.sqlite")


def default_data_dir():
    """Where the default SQLite file lives (created on first use)."""
    return os.path.abspath(platformdirs.user_data_dir("nestedflow"))


def normalize_url(url):
    """The URL every component uses: default SQLite file, with a busy timeout;
    an installed driver when the URL names none (see drivers.choose_driver)."""
    url = url or default_url()
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as error:
        raise exceptions.DatabaseUnavailable(f"malformed database URL {url!r}: {error}") from None
    try:
        parsed = drivers.choose_driver(parsed)
    except sa.exc.NoSuchModuleError as error:
        raise exceptions.DatabaseUnavailable(f"unknown database URL scheme in {url!r}: "
                                             f"{error}") from None
    if parsed.drivername.startswith("sqlite") and parsed.database not in (None, "", ":memory:"):
        directory = os.path.dirname(os.path.abspath(parsed.database))
        if directory == default_data_dir():
            os.makedirs(directory, exist_ok=True)  # the default file's home, made on first use
        elif not os.path.isdir(directory):
            # A typo in a path must not silently start an empty database.
            raise exceptions.DatabaseUnavailable(
                f"cannot use the database {url}: directory {directory} does not exist")
        if "timeout" not in parsed.query:
            # Conductors, the CLI and TaskFlow's own persistence share one
            # file; wait for the writer instead of failing with "locked".
            parsed = parsed.update_query_dict({"timeout": "60"})
    return parsed.render_as_string(hide_password=False)


def script_heads():
    """The head revision(s) of nestedflow's migrations, read from the files.

    Read without alembic: a process that only checks that the database is
    current (every engine start, every command line run) then never imports it.
    """
    revisions, parents = set(), set()
    versions = os.path.join(_MIGRATIONS, "versions")
    for name in os.listdir(versions):
        if not name.endswith(".py") or name.startswith("_"):
            continue
        with open(os.path.join(versions, name), encoding="utf-8") as f:
            found = dict(_REVISION_LINE.findall(f.read()))
        if "revision" in found:
            revisions.add(found["revision"])
            if found.get("down_revision") not in (None, "None"):
                parents.add(found["down_revision"])
    return revisions - parents


def is_current(engine):
    """Whether ``engine``'s database already has every migration.

    :func:`db_sync` upgrades nestedflow's tables last, so their version
    being the head means TaskFlow's tables and the journal indexes are there too.
    """
    errors = _driver_errors()
    try:
        conn = engine.connect()
    except errors as error:
        # The first connection of every process: name the cause in one line.
        raise unavailable(engine.url, error) from error
    with conn:
        found = _revisions(conn, errors)
    return found == script_heads()


def _revisions(conn, errors):
    """The revisions stamped on ``conn``'s database; None before any."""
    # Asked of the catalog first: a SELECT from a missing table made oslo.db
    # log "DBAPIError exception wrapped (UndefinedTable ...)" at WARNING on
    # every first command against an empty PostgreSQL database.
    try:
        if not sa.inspect(conn).has_table(_VERSION_TABLE):
            return None
        return set(conn.execute(sa.text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars())
    except errors:
        return None


def revisions(url):
    """The migration revisions ``url``'s database is at (None: no schema)."""
    engine = sa.create_engine(normalize_url(url))
    try:
        try:
            conn = engine.connect()
        except _driver_errors() as error:
            raise unavailable(engine.url, error) from error
        with conn:
            return _revisions(conn, _driver_errors())
    finally:
        engine.dispose()


def _driver_errors():
    """What a failed connection or statement raises: SQLAlchemy's errors,
    and oslo.db's wrappers of them where oslo.db made the engine -- which
    then has imported oslo_db.exception. A plain engine's caller (the
    command line's reader, db.core_reads) does not import it: 0.02 s
    (oslo_utils.timeutils with it)."""
    oslo_db_exception = sys.modules.get("oslo_db.exception")
    if oslo_db_exception is None:
        return (sa.exc.DBAPIError,)
    return (sa.exc.DBAPIError, oslo_db_exception.DBError)


def unavailable(url, error):
    """DatabaseUnavailable for ``error``: the driver's own first line (which
    names the host, port or database at fault), the URL without its password."""
    cause = getattr(error, "orig", None) or getattr(error, "inner_exception", None) or error
    cause = getattr(cause, "orig", None) or cause
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    text = lines[0] if lines else type(cause).__name__
    shown = url.render_as_string(hide_password=True) if hasattr(url, "render_as_string") else url
    return exceptions.DatabaseUnavailable(f"cannot use the database {shown}: {text}")


def _alembic_config(connection):
    from alembic.config import Config

    cfg = Config(os.path.join(_MIGRATIONS, "alembic.ini"))
    cfg.set_main_option("script_location", _MIGRATIONS)
    cfg.attributes["connection"] = connection
    return cfg


def db_sync(url=None):
    """Bring nestedflow's tables and TaskFlow's logbook tables up to date."""
    from alembic import command
    from taskflow.persistence import backends as tf_backends

    url = normalize_url(url)
    engine = sa.create_engine(url)
    try:
        if engine.dialect.name == "sqlite":
            # WAL lets readers (the CLI, `wait`) run beside the writer. The
            # mode is stored in the file, and cannot change inside a transaction.
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        backend = tf_backends.fetch({"connection": url})
        try:
            with contextlib.closing(backend.get_connection()) as conn:
                conn.upgrade()
        finally:
            backend.close()
        _index_journal(url)
        # Last: its version at the head is what is_current() checks.
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), "head")
    finally:
        engine.dispose()
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
    from alembic import command

    engine = sa.create_engine("sqlite://")
    with engine.begin() as conn:
        cfg = _alembic_config(conn)
        command.upgrade(cfg, "head")
        command.revision(cfg, message=message, autogenerate=True)
