"""A conductor paused *inside* a transaction that holds a resource row lock.

Fencing checked when a statement runs is not enough: a transaction opened
before a pause commits after it, unless the check holds until the commit
(nestedflow.db.fencing). And a transaction left open by a paused process
must not keep the rest of the cluster waiting for its row locks: the
server ends it (``idle_in_transaction_session_timeout``) before the paused
conductor's ZooKeeper session expires.

The pause point is made exact with a table lock: the test holds ``LOCK
TABLE events``, so the conductor's first resource action blocks on the
event insert of its lock's transaction -- after the statement that locked
the resource row. The test pauses the conductor there (SIGSTOP) and lets
the insert through: the conductor's transaction is then idle, holding the
row lock, for as long as the process stays stopped.
"""

import re
import signal
import time
import uuid

import pytest
import sqlalchemy as sa
from conductor_cluster import SESSION_TIMEOUT, wait_for

pytestmark = pytest.mark.functional

#: Every table a run writes: a paused run's late write would change one.
WRITTEN = ("stacks", "resources", "events", "physical_objects", "logbooks", "flowdetails",
           "atomdetails")


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def _sessions(probe, idle_for=0, **where):
    """This database's server sessions (pg_stat_activity) matching ``where``,
    in that state for ``idle_for`` seconds at least."""
    clauses = " ".join(f"AND {column} = :{column}" for column in where)
    with probe.engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT pid, state, wait_event_type, query FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            f"AND now() - state_change >= make_interval(secs => :idle_for) {clauses}"),
            {"idle_for": idle_for, **where}).all()


def _table_versions(probe):
    """Every row of every table a run writes, with the id of the
    transaction that wrote it (``xmin``): equal snapshots mean nothing
    committed in between."""
    with probe.engine.connect() as conn:
        return {table: sorted(conn.execute(sa.text(
                    f"SELECT xmin::text, ctid::text, md5(t::text) FROM {table} t")).all())
                for table in WRITTEN}


def _quiet(probe, seconds=1.0, timeout=30):
    """Table versions once they stayed the same for ``seconds``."""
    def stable():
        before = _table_versions(probe)
        time.sleep(seconds)
        return before if _table_versions(probe) == before else None

    return wait_for(stable, timeout, interval=0, what="the database to settle")


def test_paused_transaction_neither_stalls_the_stack_nor_commits_late(cluster, probe):
    engine = cluster.engine()
    template = {"heat_template_version": "2018-08-31", "resources": {
        f"r{i}": {"type": "OS::Heat::TestResource",
                  "properties": {"value": f"v{i}", "wait_secs": 0.2},
                  **({"depends_on": [f"r{i - 1}"]} if i else {})} for i in range(3)}}

    # Stored (with its "started" event) and posted before any conductor
    # runs, so the table lock below stops only the conductors' writes.
    stack = engine.create_stack(f"pause-{uuid.uuid4().hex[:6]}", template)
    with probe.engine.connect() as conn, conn.begin():
        conn.execute(sa.text("LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE"))
        cluster.start_many(["c1", "c2", "c3"])
        wait_for(lambda: _sessions(probe, wait_event_type="Lock"), 30,
                 what="a conductor to block on the event of its first lock")
        victim = cluster.holder(stack.id)
        victim.signal(signal.SIGSTOP)
        stopped_at = time.monotonic()
    # The insert went through on the server; the paused client never
    # commits: its transaction sits idle, holding r0's row lock. (The lock,
    # the start and its event are one statement, WITH written AS (UPDATE
    # resources ...) INSERT INTO events ..., which pg_stat_activity cuts
    # at 1,024 bytes, before its INSERT.)
    wait_for(lambda: [row for row in _sessions(probe, state="idle in transaction")
                      if "INSERT INTO events" in row.query
                      or " ".join(row.query.split()).startswith(
                          "WITH written AS (UPDATE resources")], 10,
             what="the paused conductor's transaction to sit idle")
    rows = {r["name"]: r for r in probe.resources(stack.id)}
    assert rows["r0"]["engine_id"] is None  # the lock is not committed

    final = engine.wait(stack.id, timeout=SESSION_TIMEOUT + 30)
    stall = time.monotonic() - stopped_at
    print(f"stack finished {stall:.1f}s after its conductor was paused "
          f"(session timeout {SESSION_TIMEOUT}s)")
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    assert stall < SESSION_TIMEOUT + 5
    assert victim.alive() and cluster.find_holder(stack.id) is not victim
    # The server ended the paused transaction: no session is left idle in
    # one (other than for a moment between two statements).
    assert not _sessions(probe, idle_for=1, state="idle in transaction")

    # The new owner's run has ended (its journal's last flush included)
    # once it finished the job.
    wait_for(lambda: any("finished: stack CREATE_COMPLETE" in c.log()
                         for c in cluster.conductors.values() if c is not victim), 60,
             what="the new owner's run to end")
    settled = _quiet(probe)
    victim.signal(signal.SIGCONT)
    wait_for(lambda: "fenced off" in victim.log(), 30, what="the woken run to see it was fenced")
    cluster.wait_registered(victim)
    time.sleep(2)
    # Not one row written, changed or deleted after the pause.
    assert _table_versions(probe) == settled
    events = probe.events(stack.id)
    assert not [e for e in events if e["engine_id"] == victim.name]
    for name in ("r0", "r1", "r2"):
        assert len([e for e in events if e["resource_name"] == name
                    and e["status"] == "IN_PROGRESS"]) == 1, name
    # The operator's view: one WARNING naming the stack, traversal and new owner.
    log = victim.log()
    warnings = [line for line in log.splitlines() if " WARNING " in line]
    fenced = [line for line in warnings if "fenced off" in line]
    assert len(fenced) == 1, warnings
    assert stack.id in fenced[0], fenced
    row = probe.stack(stack.id)
    assert row["current_traversal"] in fenced[0] and row["traversal_owner"] in fenced[0]
    assert not re.search(r" ERROR |Traceback", log), log[-4000:]


def test_a_run_event_holds_its_fence_until_its_insert_commits(make_engine, pg_url, stack_name):
    """Database.add_run_event (a nested stack's wait ending) is two
    statements, a locking read of the stack's owner and the insert: on
    PostgreSQL they once ran on the one-statement engine, whose autocommit
    let the read's lock go before the insert. A claim made between the two
    is held here by the lock until the event is in -- not committed first,
    leaving the event a write after the claim."""
    import threading

    engine = make_engine(pg_url)
    stack = engine.wait(engine.create_stack(stack_name, {
        "heat_template_version": "2018-08-31",
        "resources": {"r": {"type": "OS::Heat::None"}}}).id, timeout=60)
    traversal = engine.db.get_stack(stack.id).current_traversal
    engine.db.claim_traversal(stack.id, traversal, "runner:aaaa")
    claimed = threading.Event()
    other = make_engine(pg_url)

    def claim_between(conn, cursor, statement, parameters, context, executemany):
        # This call's insert only: the create's run may still be writing
        # its own tail (a stack event) after wait() saw the stack settle.
        if (statement.lstrip().upper().startswith("INSERT INTO EVENTS")
                and "nested stack settled" in str(parameters) and not claimed.is_set()):
            thread = threading.Thread(target=lambda: (other.db.claim_traversal(
                stack.id, traversal, "runner:bbbb"), claimed.set()), daemon=True)
            thread.start()
            event_connection.append(conn)
            thread.join(1.0)  # time enough to commit, unless the lock holds it

    # Whether the claim got through, read as the event's transaction
    # commits: read after the call returns, the claim the commit let go
    # may have finished meanwhile.
    at_commit = []

    def on_commit(conn):
        if conn in event_connection:
            at_commit.append(claimed.is_set())

    event_connection = []
    sa.event.listen(engine.db.sql_engine, "before_cursor_execute", claim_between)
    sa.event.listen(engine.db.sql_engine, "commit", on_commit)
    try:
        engine.db.add_run_event(stack.id, traversal, "runner:aaaa", None, "CREATE",
                                "IN_PROGRESS", "nested stack settled")
    finally:
        sa.event.remove(engine.db.sql_engine, "before_cursor_execute", claim_between)
        sa.event.remove(engine.db.sql_engine, "commit", on_commit)
    assert at_commit, "the claim was not tried between the read and the insert"
    claimed_first = at_commit[0]
    assert claimed.wait(10)  # the claim went through once the event's transaction ended
    assert not claimed_first
    assert engine.db.ownership(stack.id)[1] == "runner:bbbb"
