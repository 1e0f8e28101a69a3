"""Actions of types that change nothing outside the database commit once.

A type whose ``side_effects`` is False (``OS::Heat::None``) has its create
or delete run inside the transaction that takes the resource lock, and
that transaction records the action's start and end: the same rows and
events as any other type, one commit instead of two. A crash before that
commit leaves no trace; a failure is recorded as for any type.
"""

import contextlib

import pytest
import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.dispatch import held
from nestedflow.flows import factories, runtime, tasks
from nestedflow.resources import test_resource
from nestedflow.resources.none import NoneResource
from nestedflow.resources.registry import ResourceRegistry

pytestmark = pytest.mark.functional


class Crash(BaseException):
    """The process dying in the middle of an action."""


class Refusing(NoneResource):
    crash = False

    def create(self):
        if Refusing.crash:
            raise Crash()
        raise ValueError("refused by the plugin")


class Dropping(NoneResource):
    """Database-only, but its delete runs the plugin (an ``update_allowed``-
    free type like None would not reach it otherwise)."""

    deletes = []

    def delete(self):
        Dropping.deletes.append(self.physical_id)


TYPES = {"OS::Heat::None": NoneResource, "OS::Heat::TestResource": test_resource.TestResource,
         "Test::Refusing": Refusing, "Test::Dropping": Dropping}


@pytest.fixture
def engine(make_engine, db_url):
    # The one-resource way, which database-only resources after a real one
    # (and waves of one) take: waves are tested in test_database_only_waves.py.
    CONF.set_override("database_only_waves", False, group="engine")
    try:
        yield make_engine(db_url, registry=ResourceRegistry.for_testing(TYPES))
    finally:
        CONF.clear_override("database_only_waves", group="engine")


def _template(**resources):
    return {"heat_template_version": "2018-08-31",
            "resources": {name: {"type": kind} for name, kind in resources.items()}}


@contextlib.contextmanager
def _commits(db, statements=None):
    seen = []
    listener = lambda conn: seen.append(conn)  # noqa: E731

    def on_statement(conn, cursor, statement, *args):
        # Neither BEGIN nor PostgreSQL's PREPARE (once per server session,
        # db.precompiled) is a write.
        if statements is not None and not statement.lstrip().upper().startswith(
                ("BEGIN", "PREPARE")):
            statements.append(statement)

    sa.event.listen(db._engine, "commit", listener)
    sa.event.listen(db._engine, "before_cursor_execute", on_statement)
    try:
        yield seen
    finally:
        sa.event.remove(db._engine, "commit", listener)
        sa.event.remove(db._engine, "before_cursor_execute", on_statement)


def _held_flow(engine, start):
    """Store a traversal without running it; returns its tasks by resource name."""
    engine._dispatcher = held.HeldDispatcher()
    start()
    stack_id, traversal_id, action = engine._dispatcher.held[-1]
    rt = engine.runtime
    rt.db.claim_traversal(stack_id, traversal_id, "run-1")
    with runtime.installed(rt, "run-1"):
        flow = factories.stack_traversal(stack_id, traversal_id, action)
    named = {t.resource_name: t for t in flow if isinstance(t, tasks.ResourceTask)}
    return stack_id, traversal_id, named


def _run(engine, task, traversal_id, **inputs):
    with runtime.installed(engine.runtime, "run-1"):
        task.pre_execute()
        try:
            return task.execute(traversal=traversal_id, **inputs)
        finally:
            task.post_execute()


def _row(engine, stack_id, name):
    return next(r for r in engine.db.list_all_resources(stack_id) if r.name == name)


def _events(engine, stack_id, name):
    return [(e.action, e.status) for e in engine.list_events(stack_id)
            if e.resource_name == name]


def test_a_database_only_create_and_delete_commit_once_each(engine, stack_name):
    stack_id, traversal_id, named = _held_flow(engine, lambda: engine.create_stack(
        stack_name, _template(n="Test::Dropping", t="OS::Heat::TestResource")))
    db = engine.db

    statements = []
    with _commits(db, statements) as seen:
        created = _run(engine, named["n"], traversal_id)
    assert len(seen) == 1
    # The row is as the flow read it: no lock of its own, one write (and,
    # but on PostgreSQL where they share the statement, the events' insert).
    assert len(statements) == (1 if db.dialect == "postgresql" else 2), statements
    row = _row(engine, stack_id, "n")
    assert (row.action, row.status, row.engine_id) == ("CREATE", "COMPLETE", None)
    assert row.traversal_id == traversal_id and row.physical_id
    assert created == tasks.output_of(row) and created["ref"] == row.physical_id
    assert _events(engine, stack_id, "n") == [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]

    # A type with side effects records its start before it acts.
    with _commits(db) as seen:
        _run(engine, named["t"], traversal_id)
    assert len(seen) >= 2

    # Re-run (the journal lost the result): the same result, nothing new.
    assert _run(engine, named["n"], traversal_id) == created
    assert _events(engine, stack_id, "n") == [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]
    assert _row(engine, stack_id, "n").engine_id is None

    Dropping.deletes.clear()
    stack_id, traversal_id, named = _held_flow(engine, lambda: engine.delete_stack(stack_id))
    with _commits(db) as seen:
        assert _run(engine, named["n"], traversal_id) is True
    assert len(seen) == 1
    assert Dropping.deletes == [row.physical_id]
    row = _row(engine, stack_id, "n")
    assert (row.action, row.status, row.engine_id) == ("DELETE", "COMPLETE", None)
    assert _events(engine, stack_id, "n")[-2:] == [("DELETE", "IN_PROGRESS"),
                                                    ("DELETE", "COMPLETE")]
    # Deleting it again finds it gone and does not run the plugin again.
    assert _run(engine, named["n"], traversal_id) is True
    assert Dropping.deletes == [row.physical_id]


def test_a_crash_inside_a_database_only_create_leaves_no_trace(engine, stack_name):
    stack_id, traversal_id, named = _held_flow(engine, lambda: engine.create_stack(
        stack_name, _template(r="Test::Refusing")))
    Refusing.crash = True
    try:
        with pytest.raises(Crash):
            _run(engine, named["r"], traversal_id)
    finally:
        Refusing.crash = False
    row = _row(engine, stack_id, "r")
    # Neither the lock nor the start was committed: the next run starts afresh.
    assert (row.action, row.status, row.engine_id) == ("INIT", "COMPLETE", None)
    assert _events(engine, stack_id, "r") == []


def test_a_failed_database_only_create_is_recorded_like_any_other(engine, stack_name):
    stack = engine.create_stack(stack_name, _template(r="Test::Refusing", n="OS::Heat::None"),
                                disable_rollback=True)
    stack = engine.wait(stack.id, timeout=60)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "refused by the plugin" in stack.status_reason
    row = _row(engine, stack.id, "r")
    assert (row.action, row.status, row.engine_id) == ("CREATE", "FAILED", None)
    assert "refused by the plugin" in row.status_reason
    assert _events(engine, stack.id, "r") == [("CREATE", "IN_PROGRESS"), ("CREATE", "FAILED")]
    assert (_row(engine, stack.id, "n").status, _row(engine, stack.id, "n").engine_id) == (
        "COMPLETE", None)


def test_a_database_only_create_on_a_changed_row_takes_the_lock(engine, stack_name):
    """The one-statement write only applies to the row as the flow read it:
    written since (another run's lock came and went), the task locks it as
    usual; taken over by another traversal, it writes nothing."""
    stack_id, traversal_id, named = _held_flow(engine, lambda: engine.create_stack(
        stack_name, _template(a="OS::Heat::None", b="OS::Heat::None")))
    db = engine.db
    row = _row(engine, stack_id, "a")
    db.release_lock(db.lock_resource(row.id, "someone/else").id, "someone/else")
    statements = []
    with _commits(db, statements):
        created = _run(engine, named["a"], traversal_id)
    row = _row(engine, stack_id, "a")
    assert (row.action, row.status, row.engine_id) == ("CREATE", "COMPLETE", None)
    assert created == tasks.output_of(row)
    # The lock, then the write: more than the one-statement way.
    assert len(statements) > (1 if db.dialect == "postgresql" else 2), statements
    assert _events(engine, stack_id, "a") == [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]

    # Another traversal takes the stack over before "b" runs.
    db.claim_traversal(stack_id, traversal_id, "run-2")
    with pytest.raises(exceptions.TraversalSuperseded):
        _run(engine, named["b"], traversal_id)
    row = _row(engine, stack_id, "b")
    assert (row.action, row.engine_id) == ("INIT", None)
    assert _events(engine, stack_id, "b") == []
