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
