"""Shared fixtures: real databases (SQLite file, PostgreSQL, MariaDB)."""

import os
import uuid

import pytest
import sqlalchemy as sa

import nestedflow

PG_URL = os.environ.get(
    "NESTEDFLOW_TEST_PG_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
)
MYSQL_URL = os.environ.get("NESTEDFLOW_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test")

# A command line under test (in-process or a subprocess, which inherits this)
# builds its own engine: a developer's resident nestedflow-engine on the
# default socket must not answer it. The resident engine's tests say so.
os.environ["NESTEDFLOW_ENGINE"] = "embedded"

_PRIVATE = {}
#: This test session's own databases, so that two sessions on one machine
#: (a developer's and CI's, or two developers') never drop each other's tables.
_SESSION = uuid.uuid4().hex[:10]


def reset_database(url):
    """A fresh database of this session on the server of ``url``; returns its URL.

    Created once per session (migrations then run from scratch) and dropped
    when the session ends.
    """
    if url in _PRIVATE:
        return _PRIVATE[url]
    base = sa.engine.make_url(url)
    name = f"nf_test_{_SESSION}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
    finally:
        admin.dispose()
    private = base.set(database=name).render_as_string(hide_password=False)
    _PRIVATE[url] = private
    return private


def drop_database(url, name):
    """Drop database ``name`` on the server of ``url`` (its sessions ended first)."""
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            if admin.dialect.name == "postgresql":
                conn.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
    finally:
        admin.dispose()


def pytest_sessionfinish(session, exitstatus):
    for url, private in _PRIVATE.items():
        name = sa.engine.make_url(private).database
        try:
            drop_database(url, name)
        except sa.exc.SQLAlchemyError as error:
            print(f"could not drop test database {name}: {error}")


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path}/nestedflow.sqlite"


@pytest.fixture
def pg_url():
    """PostgreSQL only: for the long runs that need not repeat on every database."""
    return reset_database(PG_URL)


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def db_url(request, tmp_path):
    """Every functional test using this runs on all three real databases."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/nestedflow.sqlite"
    return reset_database(PG_URL if request.param == "postgresql" else MYSQL_URL)


@pytest.fixture(params=["postgresql", "mysql"])
def shared_db_url(request):
    """The databases several processes (engines, conductors) can share."""
    return reset_database(PG_URL if request.param == "postgresql" else MYSQL_URL)


@pytest.fixture
def make_engine():
    engines = []

    def factory(url, **kwargs):
        engine = nestedflow.Engine(db_url=url, **kwargs)
        engines.append(engine)
        return engine

    yield factory
    for engine in engines:
        engine.close()


@pytest.fixture
def engine(make_engine, db_url):
    return make_engine(db_url)


@pytest.fixture
def sqlite_engine(make_engine, sqlite_url):
    return make_engine(sqlite_url)


@pytest.fixture
def stack_name():
    return f"stack-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def fresh_database():
    """``fresh_database(url)``: a new empty database on the server of
    ``url``, dropped when the test ends -- for a test that lists
    everything a database holds, which other tests' rows in the
    session's shared database would disturb."""
    made = []

    def make(url):
        base = sa.engine.make_url(url)
        name = f"nf_fresh_{uuid.uuid4().hex[:10]}"
        admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
        finally:
            admin.dispose()
        made.append((base, name))
        return base.set(database=name).render_as_string(hide_password=False)

    yield make
    for base, name in made:
        drop_database(base, name)


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def fresh_db_url(request, tmp_path, fresh_database):
    """Every database kind, each empty for this test alone."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/fresh.sqlite"
    return fresh_database(PG_URL if request.param == "postgresql" else MYSQL_URL)
