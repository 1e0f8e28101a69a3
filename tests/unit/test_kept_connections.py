"""db.kept_connections: PostgreSQL's one-statement writes on connections
kept out of the pool between them, against the real server."""

import threading
import time

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from nestedflow import exceptions
from nestedflow.db import api, kept_connections

INSERT = "INSERT INTO kept_t (k) VALUES (%(k)s) RETURNING pg_backend_pid()"


@pytest.fixture
def db(pg_url):
    db = api.Database(pg_url)
    with db.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS kept_t")
        conn.exec_driver_sql("CREATE TABLE kept_t (k TEXT PRIMARY KEY)")
    yield db
    db.dispose()


@pytest.fixture
def other(pg_url):
    engine = sa.create_engine(pg_url)
    yield engine
    engine.dispose()


def _insert(db, key):
    """One write through Database.transaction; the server process that ran it."""
    return db.transaction(lambda conn: conn.exec_driver_sql(INSERT, {"k": key}).scalar())


def _keys(engine):
    with engine.connect() as conn:
        return {k for (k,) in conn.exec_driver_sql("SELECT k FROM kept_t")}


def _state(engine, pid):
    with engine.connect() as conn:
        return conn.exec_driver_sql(
            "SELECT state FROM pg_stat_activity WHERE pid = %(pid)s", {"pid": pid}).scalar()


def test_writes_reuse_one_connection_and_each_commits_alone(db, other):
    pool = db.sql_engine.pool
    pids = {_insert(db, f"k{i}") for i in range(5)}
    assert len(pids) == 1
    assert pool.checkedout() == 1  # kept, not given back
    # Committed as the call returned, and no transaction left open.
    assert _keys(other) == {f"k{i}" for i in range(5)}
    assert _state(other, pids.pop()) == "idle"


def test_threads_keep_no_more_than_the_cap(db, other):
    errors = []

    def writer(t):
        try:
            for i in range(20):
                _insert(db, f"t{t}-{i}")
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert len(_keys(other)) == 240
    assert 1 <= db.sql_engine.pool.checkedout() <= api.KEPT_CONNECTIONS


def test_a_failed_compare_and_swap_keeps_its_connection(db):
    pid = _insert(db, "a")

    def changed(conn):
        raise exceptions.ResourceLocked("r", "somebody")

    with pytest.raises(exceptions.ResourceLocked):
        db.transaction(changed)
    assert _insert(db, "b") == pid


def test_any_other_failure_gives_every_kept_connection_back(db, other):
    _insert(db, "a")
    with pytest.raises(db_exc.DBDuplicateEntry):
        _insert(db, "a")
    assert db.sql_engine.pool.checkedout() == 0
    _insert(db, "b")  # a new one is checked out
    assert _keys(other) == {"a", "b"}


def test_a_lost_connection_is_not_handed_out_again(db, other):
    pid = _insert(db, "a")
    with other.connect() as conn:
        conn.exec_driver_sql("SELECT pg_terminate_backend(%(pid)s)", {"pid": pid})
    # The write on the dead connection fails as a disconnect (the
    # callers' retrying runs it again), and takes no kept one with it.
    with pytest.raises(db_exc.DBConnectionError):
        _insert(db, "b")
    assert db.sql_engine.pool.checkedout() == 0
    assert _insert(db, "b") != pid
    assert _keys(other) == {"a", "b"}


def test_a_connection_idle_too_long_goes_back_to_the_pool(pg_url):
    engine = sa.create_engine(pg_url).execution_options(isolation_level="AUTOCOMMIT")
    checkouts = []
    sa.event.listen(engine, "checkout", lambda *args: checkouts.append(1))
    kept = kept_connections.KeptConnections(engine, 2, idle_after=0.2)
    try:
        def pid(conn):
            return conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()

        kept.run(pid)
        kept.run(pid)
        assert len(checkouts) == 1
        time.sleep(0.3)
        kept.run(pid)
        assert len(checkouts) == 2  # through the pool, and its ping of idle ones
        assert engine.pool.checkedout() == 1
    finally:
        kept.clear()
        engine.dispose()
    assert engine.pool.checkedout() == 0


def test_dispose_gives_the_kept_connections_back(pg_url):
    db = api.Database(pg_url)
    db.transaction(lambda conn: conn.exec_driver_sql("SELECT 1").scalar())
    pool = db.sql_engine.pool
    assert pool.checkedout() == 1
    db.dispose()
    assert pool.checkedout() == 0


def test_a_lock_transaction_is_kept_apart_and_ends_before_its_connection_is_kept(db, other):
    """``single=False`` (a resource lock's transaction): its statements
    commit together or not at all, on connections kept apart from the
    autocommitted ones."""
    def two(first, second):
        def work(conn):
            conn.exec_driver_sql(INSERT, {"k": first})
            return conn.exec_driver_sql(INSERT, {"k": second}).scalar()
        return work

    pid = db.transaction(two("a", "b"), single=False)
    assert db.transaction(two("c", "d"), single=False) == pid
    assert _state(other, pid) == "idle"  # committed, not idle in transaction
    assert _insert(db, "e") != pid  # the autocommitted writes have their own

    def fails(conn):
        two("f", "g")(conn)
        raise ValueError("after both inserts")

    with pytest.raises(ValueError):
        db.transaction(fails, single=False)
    assert _keys(other) == {"a", "b", "c", "d", "e"}
    assert db.sql_engine.pool.checkedout() == 1  # the failed one's went back


@pytest.mark.parametrize("pool_size,kept", [(4, 0), (8, 1), (16, 2)])
def test_a_quarter_of_the_pool_at_most_is_kept(pg_url, pool_size, kept):
    """A small pool keeps fewer (none under 8): a kept connection is not
    there for the process's other transactions."""
    from nestedflow.conf import CONF

    CONF.set_override("max_pool_size", pool_size, group="database")
    try:
        db = api.Database(pg_url)
    finally:
        CONF.clear_override("max_pool_size", group="database")
    try:
        for single in (True, False):
            # One more write at once than may be kept: all in flight together.
            together = threading.Barrier(kept + 1)

            def write(together, single):
                db.transaction(lambda conn: (together.wait(10),
                                             conn.exec_driver_sql("SELECT 1").scalar()),
                               single=single)

            threads = [threading.Thread(target=write, args=(together, single))
                       for _ in range(kept + 1)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
        # Both kinds kept, up to the cap each.
        assert db.sql_engine.pool.checkedout() == 2 * kept
    finally:
        db.dispose()
