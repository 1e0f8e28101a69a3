"""db.group_commit: work of many threads in one SQLite transaction, each
caller told only of its own outcome, after the commit."""

import threading

import pytest
import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import group_commit


@pytest.fixture
def engine(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path}/group.sqlite")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (k TEXT PRIMARY KEY)")
    yield engine
    engine.dispose()


def _keys(engine):
    with engine.connect() as conn:
        return {k for (k,) in conn.exec_driver_sql("SELECT k FROM t")}


def _insert(key):
    def work(conn):
        conn.exec_driver_sql("INSERT INTO t (k) VALUES (?)", (key,))
        return key
    return work


def _held(group, first, then):
    """Run ``first`` while the leader's transaction is held open, queue
    ``then`` (a list of work) from other threads meanwhile; returns the
    outcomes of ``then`` (result or exception), in order."""
    entered, release = threading.Event(), threading.Event()

    def blocking(conn):
        entered.set()
        release.wait(10)
        return first(conn)

    leader = threading.Thread(target=group.run, args=(blocking,))
    leader.start()
    entered.wait(10)
    outcomes = [None] * len(then)

    def call(i, work):
        try:
            outcomes[i] = group.run(work)
        except Exception as error:  # noqa: BLE001 - the outcome under test
            outcomes[i] = error

    threads = [threading.Thread(target=call, args=(i, work)) for i, work in enumerate(then)]
    for queued, thread in enumerate(threads, 1):
        thread.start()
        # Queued in this order, behind the leader, before it commits.
        while len(group._queue) < queued:
            threading.Event().wait(0.01)
    release.set()
    leader.join(10)
    for thread in threads:
        thread.join(10)
    return outcomes


def test_followers_share_one_commit_and_get_their_own_results(engine):
    commits = []
    sa.event.listen(engine, "commit", lambda conn: commits.append(1))
    group = group_commit.GroupCommit(engine)
    outcomes = _held(group, _insert("lead"), [_insert(f"k{i}") for i in range(5)])
    assert outcomes == [f"k{i}" for i in range(5)]
    assert _keys(engine) == {"lead", *(f"k{i}" for i in range(5))}
    # The leader's own commit, then one for the five queued meanwhile.
    assert len(commits) == 2


def test_nothing_written_failure_is_its_callers_alone(engine):
    group = group_commit.GroupCommit(engine)

    def locked(conn):
        raise exceptions.ResourceLocked("r", "a newer owner")

    outcomes = _held(group, _insert("lead"), [_insert("a"), locked, _insert("b")])
    assert outcomes[0] == "a" and outcomes[2] == "b"
    assert isinstance(outcomes[1], exceptions.ResourceLocked)
    assert _keys(engine) == {"lead", "a", "b"}


def test_an_error_rolls_the_group_back_and_each_runs_alone(engine):
    group = group_commit.GroupCommit(engine)
    runs = []

    def counted(key):
        def work(conn):
            runs.append(key)
            return _insert(key)(conn)
        return work

    # A duplicate key fails its statement: the others are written once
    # each all the same, and only the duplicate's caller sees its error.
    outcomes = _held(group, _insert("lead"),
                     [counted("a"), _insert("a"), counted("b")])
    assert outcomes[0] == "a" and outcomes[2] == "b"
    assert isinstance(outcomes[1], sa.exc.IntegrityError)
    assert _keys(engine) == {"lead", "a", "b"}
    # "a" ran in the group (rolled back at the duplicate, before "b"
    # ran), then each ran alone.
    assert runs == ["a", "a", "b"]


def test_a_lone_caller_gets_its_error(engine):
    group = group_commit.GroupCommit(engine)
    group.run(_insert("x"))
    with pytest.raises(sa.exc.IntegrityError):
        group.run(_insert("x"))
    assert group.run(_insert("y")) == "y"
    assert _keys(engine) == {"x", "y"}


def test_a_failed_transaction_is_every_callers_error(engine):
    group = group_commit.GroupCommit(engine)
    ran = []

    def work(conn):
        ran.append(1)
        return _insert("never")(conn)

    def lead(conn):
        # The next transaction (the followers') cannot begin.
        sa.event.listen(engine, "begin", _busy)
        return _insert("lead")(conn)

    outcomes = _held(group, lead, [work, work])
    sa.event.remove(engine, "begin", _busy)
    assert all(isinstance(o, sa.exc.OperationalError) for o in outcomes), outcomes
    assert not ran
    assert _keys(engine) == {"lead"}


def _busy(conn):
    raise sa.exc.OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))
