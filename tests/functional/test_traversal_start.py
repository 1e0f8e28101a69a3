"""What starting and ending a traversal reads and writes, on every database.

A small stack's time is mostly this fixed part (doc/source/performance.rst):
the claim hands the flow the stack it read, a run's journal starts in one
transaction that inserts the stack's logbook only if it is missing,
template versions are read once per process, and waiters wake when the
stack settles rather than when its run has finished flushing.
"""

import contextlib
import threading
import time

import pytest
import sqlalchemy as sa

from nestedflow.db import migration
from nestedflow.dispatch import held
from nestedflow.flows import runner
from nestedflow.taskflow import journal_backend

pytestmark = pytest.mark.functional

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::None"},
                          "b": {"type": "OS::Heat::None", "depends_on": ["a"]}}}


@contextlib.contextmanager
def _statements(db):
    seen = []

    def on_statement(conn, cursor, statement, *args):
        seen.append(" ".join(statement.split()).upper())

    sa.event.listen(db._engine, "before_cursor_execute", on_statement)
    try:
        yield seen
    finally:
        sa.event.remove(db._engine, "before_cursor_execute", on_statement)


def _hold(engine):
    hold = held.HeldDispatcher()
    engine._dispatcher = hold
    return hold


def test_the_claim_returns_the_stack_it_claimed(engine, stack_name):
    hold = _hold(engine)
    created = engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, _ = hold.held[-1]
    before = engine.db.get_stack(stack_id)

    claimed = engine.db.claim_traversal(stack_id, traversal_id, "run-1")

    assert (claimed.id, claimed.current_traversal, claimed.traversal_owner) == (
        created.id, traversal_id, "run-1")
    assert claimed.atomic_key == before.atomic_key + 1
    stored = engine.db.get_stack(stack_id)
    assert (stored.traversal_owner, stored.atomic_key) == ("run-1", claimed.atomic_key)


def test_create_stack_returns_the_row_it_stored(engine, stack_name):
    _hold(engine)
    created = engine.create_stack(stack_name, TEMPLATE, disable_rollback=True)
    assert created == engine.get_stack(created.id)
    assert (created.action, created.status, created.disable_rollback) == (
        "CREATE", "IN_PROGRESS", True)


def test_a_run_starts_its_journal_without_reading_the_logbook(engine, stack_name):
    hold = _hold(engine)
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, action = hold.held[-1]
    rt = engine.runtime

    with _statements(engine.db) as seen:
        runner.run_traversal(rt, engine._backend, stack_id, traversal_id, action,
                             first_run=True)
    assert engine.get_stack(stack_id).status == "COMPLETE"
    journal = [s for s in seen if any(t in s for t in ("LOGBOOKS", "FLOWDETAILS"))]
    assert not [s for s in journal if s.startswith("SELECT")], journal
    assert sum(s.startswith("INSERT INTO LOGBOOKS") for s in journal) == 1

    # The next traversal's run finds the logbook there: one logbook, a flow
    # detail per run.
    engine.delete_stack(stack_id)
    stack_id, traversal_id, action = hold.held[-1]
    runner.run_traversal(rt, engine._backend, stack_id, traversal_id, action)
    assert engine.get_stack(stack_id).stack_status == "DELETE_COMPLETE"
    with engine.db._engine.connect() as conn:
        books = conn.execute(sa.text("SELECT COUNT(*) FROM logbooks WHERE uuid = :u"),
                             {"u": stack_id}).scalar()
        details = conn.execute(sa.text("SELECT COUNT(*) FROM flowdetails "
                                       "WHERE parent_uuid = :u"), {"u": stack_id}).scalar()
    assert (books, details) == (1, 2)


def test_a_template_version_is_read_once_per_process(engine, stack_name):
    hold = _hold(engine)
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, action = hold.held[-1]
    with _statements(engine.db) as seen:
        runner.run_traversal(engine.runtime, engine._backend, stack_id, traversal_id, action,
                             first_run=True)
    assert engine.get_stack(stack_id).status == "COMPLETE"
    assert not [s for s in seen if "FROM RAW_TEMPLATES" in s]

    # Another process has none cached: it reads it, once.
    other = engine.db.__class__(engine.db.url)
    try:
        template_id = engine.db.get_stack(stack_id).raw_template_id
        with _statements(other) as seen:
            first = other.get_template(template_id)
            again = other.get_template(template_id)
        assert first.template == TEMPLATE and again is first
        assert len([s for s in seen if "FROM RAW_TEMPLATES" in s]) == 1
    finally:
        other.dispose()


def test_a_run_superseded_after_its_claim_acts_on_nothing(engine, stack_name):
    """The first task checks ownership against the stack the claim read;
    a takeover after that is caught by each resource's own write."""
    hold = _hold(engine)
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, action = hold.held[-1]

    def supersede(_engine):
        engine.delete_stack(stack_id)
        return True

    runner.run_traversal(engine.runtime, engine._backend, stack_id, traversal_id, action,
                         on_engine=supersede, first_run=True)

    stack = engine.db.get_stack(stack_id)
    assert (stack.action, stack.status) == ("DELETE", "IN_PROGRESS")
    assert stack.current_traversal == hold.held[-1][1] != traversal_id
    rows = engine.db.list_resources(stack_id)
    assert sorted((r.name, r.action, r.engine_id) for r in rows) == [
        ("a", "INIT", None), ("b", "INIT", None)]
    assert not [e for e in engine.db.list_events(stack_id) if e.resource_name]


class _NotifiedOnly:
    """The engine's settle condition, but a wait only ends when notified
    (or after a long safety timeout, recorded as a failure)."""

    def __init__(self, condition):
        self._condition = condition
        self.timed_out = 0

    def __enter__(self):
        return self._condition.__enter__()

    def __exit__(self, *exc):
        return self._condition.__exit__(*exc)

    def wait(self, timeout=None):
        if not self._condition.wait(30):
            self.timed_out += 1

    def notify_all(self):
        self._condition.notify_all()


def test_wait_wakes_when_the_stack_settles_not_when_its_run_ends(engine, stack_name,
                                                                  monkeypatch):
    flushing = threading.Event()
    release = threading.Event()
    close = journal_backend.JournalBackend.close

    def held_close(self):
        # The run's last step: flushing its journal after the stack settled.
        flushing.set()
        release.wait(60)
        return close(self)

    monkeypatch.setattr(journal_backend.JournalBackend, "close", held_close)
    settled = engine._settled = _NotifiedOnly(engine._settled)
    try:
        stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=120)
        assert stack.stack_status == "CREATE_COMPLETE"
        # Woken by the settle: the run's own end is held back until now.
        assert settled.timed_out == 0
        assert flushing.wait(30)
    finally:
        release.set()


def test_a_waiter_gets_the_stack_as_its_settle_wrote_it(engine, stack_name, monkeypatch):
    """A stack settled by this process is handed to its waiters as the
    settling write returned it: no read of the stack after the wake-up
    (MariaDB's write returns no row; its waiters read it)."""
    hold = _hold(engine)
    hold.runs_in_process = True  # the test runs the traversal itself
    engine.create_stack(stack_name, TEMPLATE)
    stack_id, traversal_id, action = hold.held[-1]
    settled = threading.Event()
    changed = engine.db._changed

    def settling(stack_id, action, status, stack=None):
        if status != "IN_PROGRESS":
            settled.set()
        changed(stack_id, action, status, stack)

    monkeypatch.setattr(engine.db, "_changed", settling)
    # Its periodic look (for stacks settled elsewhere) could fall after the
    # settle: only notifications wake it here.
    engine._settled = _NotifiedOnly(engine._settled)
    reads = []  # the waiter's, and whether the stack had settled then

    def on_statement(conn, cursor, statement, *args):
        if threading.current_thread() is waiter and "FROM stacks" in statement:
            reads.append(settled.is_set())

    result = []
    waiter = threading.Thread(target=lambda: result.append(engine.wait(stack_id, 120)))
    sa.event.listen(engine.db._engine, "before_cursor_execute", on_statement)
    try:
        waiter.start()
        deadline = time.monotonic() + 60
        while not reads and time.monotonic() < deadline:  # it looked before the run
            time.sleep(0.01)
        runner.run_traversal(engine.runtime, engine._backend, stack_id, traversal_id,
                             action, first_run=True)
        waiter.join(120)
    finally:
        sa.event.remove(engine.db._engine, "before_cursor_execute", on_statement)
    assert not waiter.is_alive()
    (stack,) = result
    assert stack.stack_status == "CREATE_COMPLETE"
    assert stack == engine.get_stack(stack_id)
    returns_rows = engine.db._engine.dialect.update_returning
    assert reads[0] is False
    assert reads.count(True) == (0 if returns_rows else 1), reads
    assert not engine._waiting  # the wait's slot is gone with it


def test_db_sync_indexes_the_journal_parent_links(db_url):
    url = migration.db_sync(db_url)
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        for table in ("flowdetails", "atomdetails"):
            assert any(index["column_names"][:1] == ["parent_uuid"]
                       for index in inspector.get_indexes(table)), table
        migration.db_sync(db_url)  # idempotent
    finally:
        engine.dispose()
