"""db.precompiled runs a statement as Connection.execute would: the same
rows written, with JSON, timestamps, literal parameters, executemany."""

import datetime

import pytest
import sqlalchemy as sa

from nestedflow.db import precompiled
from nestedflow.db.schema import Json, Timestamp

META = sa.MetaData()
ROWS = sa.Table("rows", META, sa.Column("id", sa.Integer, primary_key=True),
                sa.Column("data", Json), sa.Column("at", Timestamp),
                sa.Column("n", sa.Integer))
WHEN = datetime.datetime(2026, 11, 27, 15, 1, 2, 345678)


def _engine():
    engine = sa.create_engine("sqlite://")
    META.create_all(engine)
    return engine


def _rows(conn):
    return [tuple(r) for r in conn.execute(sa.select(ROWS).order_by(ROWS.c.id))]


def test_writes_what_execute_writes():
    insert = sa.insert(ROWS).values(id=sa.bindparam("w_id"), data=sa.bindparam("v_data"),
                                    at=sa.bindparam("v_at"), n=sa.bindparam("v_n"))
    # A literal parameter (n + 1) beside named ones.
    update = (sa.update(ROWS).where(ROWS.c.id == sa.bindparam("w_id"))
              .values(data=sa.bindparam("v_data"), n=ROWS.c.n + 1))
    engine = _engine()
    values = [{"w_id": i, "v_data": {"k": [i, None]}, "v_at": WHEN, "v_n": i} for i in (1, 2)]
    with engine.begin() as conn:
        conn.execute(insert, values)
        conn.execute(update, {"w_id": 1, "v_data": None})
        expected = _rows(conn)
        conn.execute(sa.delete(ROWS))
        precompiled.execute(conn, insert, values)
        assert precompiled.execute(conn, update, {"w_id": 1, "v_data": None}).rowcount == 1
        assert _rows(conn) == expected
        assert expected[0][1:] == (None, WHEN, 2)


def test_expanding_parameters_are_refused():
    stmt = sa.select(ROWS).where(ROWS.c.id.in_(sa.bindparam("ids", expanding=True)))
    with pytest.raises(ValueError):
        precompiled.Precompiled(stmt, _engine().dialect)


# PostgreSQL: statements prepared once per server session (PREPARE, EXECUTE).

NAMED = sa.Table("named", META, sa.Column("id", sa.Integer, primary_key=True),
                 sa.Column("name", sa.String(8)), sa.Column("data", Json),
                 sa.Column("at", Timestamp), sa.Column("n", sa.Integer))
PG_INSERT = sa.insert(NAMED).values(id=sa.bindparam("w_id"), name=sa.bindparam("v_name"),
                                    data=sa.bindparam("v_data"), at=sa.bindparam("v_at"),
                                    n=sa.bindparam("v_n"))
PG_UPDATE = (sa.update(NAMED)
             .where(NAMED.c.id == sa.bindparam("w_id"), NAMED.c.name == sa.bindparam("w_name"))
             .values(data=sa.bindparam("v_data"), n=NAMED.c.n + 1)
             .returning(NAMED.c.id, NAMED.c.n))


@pytest.fixture
def pg_engine(pg_url):
    engine = sa.create_engine(pg_url)
    precompiled.prepare_on(engine)
    META.drop_all(engine)
    META.create_all(engine)
    yield engine
    engine.dispose()


def _prepared(conn):
    """(name, statement) of what this server session has prepared."""
    return sorted(tuple(r) for r in conn.exec_driver_sql(
        "SELECT name, statement FROM pg_prepared_statements"))


def _pg_rows(conn):
    return [tuple(r) for r in conn.execute(sa.select(NAMED).order_by(NAMED.c.id))]


def test_postgresql_prepares_each_statement_once_per_session(pg_engine):
    values = {"w_id": 1, "v_name": "abc", "v_data": {"k": [1, None], "s": "it's 100%"},
              "v_at": WHEN, "v_n": None}
    with pg_engine.begin() as conn:
        conn.execute(PG_INSERT, values)
        conn.execute(PG_UPDATE, {"w_id": 1, "w_name": "abc", "v_data": None})
        expected = _pg_rows(conn)
        conn.execute(sa.delete(NAMED))
        assert _prepared(conn) == []  # nothing precompiled ran yet
        assert precompiled.execute(conn, PG_INSERT, values).rowcount == 1
        found = precompiled.execute(conn, PG_UPDATE, {"w_id": 1, "w_name": "abc",
                                                       "v_data": None}).all()
        assert [tuple(r) for r in found] == [(1, None)]  # RETURNING comes back
        assert _pg_rows(conn) == expected
        assert expected[0][1:] == ("abc", None, WHEN, None)
        for _ in range(10):
            precompiled.execute(conn, PG_UPDATE, {"w_id": 1, "w_name": "abc", "v_data": {}})
        prepared = _prepared(conn)
    # Two statements, each prepared once, named for what they write.
    assert [name.rsplit("_", 1)[0] for name, _ in prepared] == ["nf_insert_named",
                                                               "nf_update_named"]
    assert all(statement.startswith(f"PREPARE {name} (") for name, statement in prepared)
    with pg_engine.connect() as conn:  # the pool's same session
        assert _prepared(conn) == prepared


def test_postgresql_compares_a_long_string_whole(pg_engine):
    """A string parameter is declared text, not its column's varchar(8): a
    value compared with the column is not cut to 8 characters first, and
    one written into it is still refused as too long."""
    with pg_engine.begin() as conn:
        precompiled.execute(conn, PG_INSERT, {"w_id": 1, "v_name": "abcdefgh", "v_data": None,
                                              "v_at": WHEN, "v_n": 1})
        assert precompiled.execute(conn, PG_UPDATE, {"w_id": 1, "w_name": "abcdefgh-and-more",
                                                     "v_data": None}).all() == []
    with pytest.raises(sa.exc.DataError, match="too long"):
        with pg_engine.begin() as conn:
            precompiled.execute(conn, PG_INSERT, {"w_id": 2, "v_name": "abcdefghi",
                                                  "v_data": None, "v_at": WHEN, "v_n": 1})


def test_postgresql_prepared_statement_outlives_a_rollback(pg_engine):
    values = {"w_id": 1, "v_name": "a", "v_data": None, "v_at": WHEN, "v_n": 1}
    with pytest.raises(sa.exc.IntegrityError):
        with pg_engine.begin() as conn:
            precompiled.execute(conn, PG_INSERT, values)
            precompiled.execute(conn, PG_INSERT, values)  # duplicate key: rolled back
    with pg_engine.begin() as conn:
        assert len(_prepared(conn)) == 1  # PREPARE is not transactional
        assert precompiled.execute(conn, PG_INSERT, values).rowcount == 1  # not prepared again
    with pg_engine.connect() as conn:
        assert _pg_rows(conn)[0][:2] == (1, "a")


def test_postgresql_new_server_session_prepares_again(pg_engine, pg_url):
    values = {"w_id": 1, "v_name": "a", "v_data": None, "v_at": WHEN, "v_n": 1}
    with pg_engine.begin() as conn:
        precompiled.execute(conn, PG_INSERT, values)
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
    killer = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with killer.connect() as conn:
        conn.exec_driver_sql("SELECT pg_terminate_backend(%(pid)s)", {"pid": pid})
    killer.dispose()
    with pytest.raises(sa.exc.OperationalError):
        with pg_engine.begin() as conn:  # the pool's dead session
            precompiled.execute(conn, PG_UPDATE, {"w_id": 1, "w_name": "a", "v_data": None})
    with pg_engine.begin() as conn:  # a new session: nothing prepared on it yet
        assert conn.exec_driver_sql("SELECT pg_backend_pid()").scalar() != pid
        assert _prepared(conn) == []
        assert precompiled.execute(conn, PG_UPDATE, {"w_id": 1, "w_name": "a",
                                                     "v_data": None}).all() == [(1, 2)]
        assert len(_prepared(conn)) == 1


def test_postgresql_engine_without_prepare_on_sends_the_statement(pg_url):
    engine = sa.create_engine(pg_url)
    META.drop_all(engine)
    META.create_all(engine)
    try:
        with engine.begin() as conn:
            precompiled.execute(conn, PG_INSERT, {"w_id": 1, "v_name": "a", "v_data": None,
                                                  "v_at": WHEN, "v_n": 1})
            assert _prepared(conn) == []
    finally:
        engine.dispose()


@pytest.mark.parametrize("enabled", [True, False])
def test_database_prepares_as_configured(pg_url, enabled):
    """``[database] prepared_statements``: on by default, off for a pooler
    that moves a client's statements between server sessions."""
    from nestedflow.conf import CONF
    from nestedflow.db import api

    assert CONF.database.prepared_statements is True  # the default
    CONF.set_override("prepared_statements", enabled, group="database")
    try:
        db = api.Database(pg_url)
        try:
            with db.sql_engine.connect() as conn:
                assert (precompiled.PREPARED in conn.info) is enabled
        finally:
            db.dispose()
    finally:
        CONF.clear_override("prepared_statements", group="database")


def _first_returns_rows_as_execute_does(engine, table, insert):
    """precompiled.first gives the row Connection.execute gives (JSON
    decoded, timestamps parsed where the driver returns text), by key."""
    returning = (sa.update(table).where(table.c.id == sa.bindparam("w_id"))
                 .values(n=table.c.n + 1).returning(*table.c))
    with engine.begin() as conn:
        conn.execute(insert, {"w_id": 1, "v_name": "a", "v_data": {"k": [1, None]},
                              "v_at": WHEN, "v_n": 1})
        expected = dict(conn.execute(returning, {"w_id": 1}).first()._mapping)
        found = precompiled.first(conn, returning, {"w_id": 1})
        assert precompiled.first(conn, returning, {"w_id": 2}) is None
    assert found == {**expected, "n": expected["n"] + 1}
    assert found["data"] == {"k": [1, None]} and found["at"] == WHEN


def test_first_returns_rows_as_execute_does():
    engine = _engine()
    _first_returns_rows_as_execute_does(engine, NAMED, PG_INSERT)


def test_postgresql_first_returns_rows_as_execute_does(pg_engine):
    _first_returns_rows_as_execute_does(pg_engine, NAMED, PG_INSERT)


def test_postgresql_statement_without_parameters_is_prepared_too(pg_engine):
    count = sa.select(sa.func.count()).select_from(NAMED)
    with pg_engine.begin() as conn:
        assert precompiled.first(conn, count, {}) is not None
        assert precompiled.execute(conn, count, {}).scalar() == 0
        [(name, statement)] = _prepared(conn)
    assert statement == f"PREPARE {name} AS SELECT count(*) AS count_1 \nFROM named"
