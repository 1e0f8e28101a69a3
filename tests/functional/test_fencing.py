"""Fencing of the writes a run makes outside nestedflow's own tables.

A conductor paused past its ZooKeeper session wakes up believing it still
owns its job. Stack and resource rows are fenced by compare-and-swap; these
tests cover the other two things it could write: the physical objects
(the "cloud" of the built-in types) and its TaskFlow journal.
"""

import contextlib
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
from taskflow import retry as tf_retry
from taskflow import task
from taskflow.patterns import graph_flow, linear_flow
from taskflow.persistence import models as tf_models

from nestedflow import exceptions
from nestedflow.flows import factories, journal, runner
from nestedflow.taskflow import journal_backend
from nestedflow.taskflow import parallel_engine as flow_engine
from nestedflow.taskflow.sql_backend import TaskflowBackend

pytestmark = pytest.mark.functional

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"x": {"type": "OS::Heat::TestResource"}}}


@pytest.fixture
def stack(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    engine._dispatcher.join()  # the create's run has flushed its journal too
    yield stack
    # Other tests count every live object of the database.
    for obj in engine.store.live(stack.id):
        engine.store.delete(obj.id)


def _row(engine, stack):
    return engine.db.list_resources(stack.id)[0]


def test_physical_store_acts_only_for_the_lock_holder(engine, stack):
    store, db = engine.store, engine.db
    row = _row(engine, stack)
    db.lock_resource(row.id, "T/run-a")
    create = dict(stack_id=stack.id, resource_id=row.id, resource_name="x",
                  type_name="OS::Heat::TestResource", properties={})

    made = store.create("k1", fence=(row.id, "T/run-a"), **create)
    # The traversal's own runs (a token ending in "/") are accepted too.
    assert store.create("k1", fence=(row.id, "T/"), **create).id == made.id
    # Another run of the same traversal, another traversal: refused.
    for token in ("T/run-b", "U/", "U/run-a"):
        with pytest.raises(exceptions.ResourceLocked):
            store.create(f"k-{token}", fence=(row.id, token), **create)
        with pytest.raises(exceptions.ResourceLocked):
            store.update(made.id, "x", fence=(row.id, token), properties={"v": token})
        with pytest.raises(exceptions.ResourceLocked):
            store.delete(made.id, fence=(row.id, token), resource_name="x")
    store.update(made.id, "x", fence=(row.id, "T/run-a"), properties={"v": "a"})
    assert store.get(made.id).properties == {"v": "a"}

    # Once the lock is released nobody may act through it.
    db.release_lock(row.id, "T/run-a")
    with pytest.raises(exceptions.ResourceLocked):
        store.delete(made.id, fence=(row.id, "T/run-a"), resource_name="x")
    assert store.get(made.id) is not None
    assert [o.create_key for o in store.live(stack.id)].count("k1") == 1


def _journal(db, stack_id, traversal_id, owner, **kwargs):
    stock = TaskflowBackend.for_database(db)
    return journal_backend.JournalBackend(
        stock, stock.engine, journal.owner_fence(db, stack_id, traversal_id, owner),
        redact=journal.redacted, **kwargs)


def _save(backend, stack_id, traversal_id, run, owner):
    return journal.copy_forward(
        backend, stack_id, None, f"run {run}",
        runner.flow_meta(factories.TRAVERSAL,
                         {"stack_id": stack_id, "traversal_id": traversal_id,
                          "action": "CREATE"}, run, owner))


def _claimed_run(db, stack, owner):
    """Claim the stack's traversal for ``owner``; its journal and flow detail.

    The detail is run 2: run 1 was the embedded engine's, which created the stack.
    """
    traversal = db.get_stack(stack.id).current_traversal
    db.claim_traversal(stack.id, traversal, owner)
    run = _journal(db, stack.id, traversal, owner)
    return traversal, run, _save(run, stack.id, traversal, 2, owner)


def test_journal_of_a_fenced_run_takes_no_write(engine, stack):
    db = engine.db
    traversal, first, detail = _claimed_run(db, stack, "c1:aaaa")

    # Another conductor claims the traversal: the first run is fenced off...
    db.claim_traversal(stack.id, traversal, "c2:bbbb")
    second = _journal(db, stack.id, traversal, "c2:bbbb")
    detail.state = "REVERTING"
    with pytest.raises(exceptions.Fenced), contextlib.closing(first.get_connection()) as conn:
        conn.update_flow_details(detail)
    with pytest.raises(exceptions.Fenced):
        _save(first, stack.id, traversal, 9, "c1:aaaa")
    # ...while the new owner resumes from the latest run and journals its own.
    latest = journal.latest_detail(second, stack.id, traversal)
    assert latest.uuid == detail.uuid and latest.state != "REVERTING"
    atom = tf_models.TaskDetail("create x #1", str(uuid.uuid4()))
    atom.state = "SUCCESS"
    latest.add(atom)
    resumed = journal.copy_forward(second, stack.id, latest, "run 2", {
        **latest.meta, "run": 3, "owner": "c2:bbbb"})
    again = journal.latest_detail(second, stack.id, traversal)
    assert again.uuid == resumed.uuid
    assert [(a.name, a.state) for a in again] == [("create x #1", "SUCCESS")]
    assert [a.uuid for a in again] != [atom.uuid]  # a copy, not shared rows
    # The stack itself only answers to the new owner.
    with pytest.raises(exceptions.OwnershipLost):
        db.set_stack_state(stack.id, traversal, "CREATE", "FAILED", "late", owner="c1:aaaa")


def _stored_state(db, detail_uuid, atom_uuid):
    stock = TaskflowBackend.for_database(db)
    with contextlib.closing(stock.get_connection()) as conn:
        return conn.get_atom_details(atom_uuid).state


def test_journal_writes_behind_in_order_and_drops_what_a_fenced_run_wrote(engine, stack):
    db = engine.db
    traversal, run, detail = _claimed_run(db, stack, "c1:ffff")
    atoms = [tf_models.TaskDetail(f"create r{i} #{i}", str(uuid.uuid4())) for i in range(3)]
    for atom in atoms:
        atom.state = "PENDING"
        detail.add(atom)
    with contextlib.closing(run.get_connection()) as conn:
        # A flow-detail write (new atoms) is durable when it returns...
        conn.update_flow_details(detail)
        assert [_stored_state(db, detail.uuid, a.uuid) for a in atoms] == ["PENDING"] * 3
        # ...atom transitions are written behind, together.
        for atom in atoms:
            atom.state = "RUNNING"
            conn.update_atom_details(atom)
        atoms[0].state = "SUCCESS"
        conn.update_atom_details(atoms[0])
        run.flush()
        assert [_stored_state(db, detail.uuid, a.uuid) for a in atoms] == [
            "SUCCESS", "RUNNING", "RUNNING"]
        # Fenced before the next flush: those writes never land, and every
        # later write of the run is refused.
        atoms[1].state = "SUCCESS"
        conn.update_atom_details(atoms[1])
        db.claim_traversal(stack.id, traversal, "c2:ffff")
        with pytest.raises(exceptions.Fenced):
            run.flush()
        assert _stored_state(db, detail.uuid, atoms[1].uuid) == "RUNNING"
        with pytest.raises(exceptions.Fenced):
            conn.update_atom_details(atoms[2])
    with pytest.raises(exceptions.Fenced):
        run.close()  # the run's final flush tells it too
    run.close()  # once closed, closing again is quiet

    # The flusher writes without being asked, within its interval.
    db.claim_traversal(stack.id, traversal, "c3:ffff")
    stock = TaskflowBackend.for_database(db)
    later = journal_backend.JournalBackend(
        stock, stock.engine, journal.owner_fence(db, stack.id, traversal, "c3:ffff"),
        flush_interval=0.05, redact=journal.redacted)
    atoms[2].state = "SUCCESS"
    with contextlib.closing(later.get_connection()) as conn:
        conn.update_atom_details(atoms[2])
    deadline = time.monotonic() + 10
    while _stored_state(db, detail.uuid, atoms[2].uuid) != "SUCCESS":
        assert time.monotonic() < deadline, "the flusher never wrote"
        time.sleep(0.02)
    later.close()


def test_suspending_a_fenced_run_neither_raises_nor_writes(engine, stack):
    """A conductor waking from a pause suspends its runs (session lost) just
    as their journal starts refusing writes; TaskFlow's suspend() journals
    the SUSPENDING state, which must not take the conductor down."""
    import taskflow.engines
    from taskflow.patterns import linear_flow

    from nestedflow.conductor.claimed_run import ClaimedRun

    db = engine.db
    backend = TaskflowBackend.for_database(db)
    traversal, fenced, detail = _claimed_run(db, stack, "c1:cccc")
    flow = linear_flow.Flow("noop")
    tf_engine = taskflow.engines.load(flow, flow_detail=detail, backend=fenced)
    run = ClaimedRun(None, "c1:cccc", stack.id, traversal, "CREATE")
    assert run.attach(tf_engine) is True

    db.claim_traversal(stack.id, traversal, "c2:dddd")
    run.suspend()
    assert run.suspend_requested
    assert journal.latest_detail(backend, stack.id, traversal).state == detail.state
    # Still a suspend request for a run that has not attached its engine yet.
    late = ClaimedRun(None, "c1:eeee", stack.id, traversal, "CREATE")
    late.suspend()
    assert late.attach(tf_engine) is False


class _Noop(task.Task):
    def __init__(self, name):
        super().__init__(name)
        self.version = (2, 1)

    def execute(self):
        return None


def _statements(db):
    """SQL statements run on ``db``'s engine while the block runs (a list)."""
    seen = []

    def record(conn, cursor, statement, *args):
        seen.append(statement.split()[0:3])

    @contextlib.contextmanager
    def recording():
        sa.event.listen(db._engine, "before_cursor_execute", record)
        try:
            yield seen
        finally:
            sa.event.remove(db._engine, "before_cursor_execute", record)

    return recording()


def test_a_run_journal_starts_whole_in_one_write(engine, stack):
    """The run's flow detail is saved with an atom detail for every atom of
    its flow, as TaskFlow would make them; TaskFlow then adds none, and the
    run starting (RUNNING) waits for the next flush."""
    import taskflow.engines

    db = engine.db
    traversal = db.get_stack(stack.id).current_traversal
    db.claim_traversal(stack.id, traversal, "c1:1111")
    run = _journal(db, stack.id, traversal, "c1:1111")
    inner = linear_flow.Flow("inner", retry=tf_retry.Times(2, name="again"))
    inner.add(_Noop("b"))
    flow = graph_flow.Flow("outer").add(_Noop("a"), inner)
    previous = tf_models.FlowDetail("run 1", str(uuid.uuid4()))
    done = tf_models.TaskDetail("a", str(uuid.uuid4()))
    done.state = "SUCCESS"
    previous.add(done)
    detail = journal.copy_forward(run, stack.id, previous, "run 2", {"run": 2}, flow=flow)

    stored = journal_backend.JournalBackend(TaskflowBackend.for_database(db), db.sql_engine,
                                            lambda conn=None: None, redact=journal.redacted)
    with contextlib.closing(stored.get_connection()) as conn:
        atoms = {a.name: a for a in conn.get_flow_details(detail.uuid)}
    assert {name: (type(a).__name__, a.state, a.version) for name, a in atoms.items()} == {
        "a": ("TaskDetail", "SUCCESS", None),  # carried forward, not re-made
        "b": ("TaskDetail", "PENDING", "2.1"),
        "again": ("RetryDetail", "PENDING", "1.0"),
    }
    tf_engine = taskflow.engines.load(flow, flow_detail=detail, backend=run,
                                      engine=flow_engine.ENGINE)
    tf_engine.compile()
    # Saves go to the journal's memory: no retry wrapper around each.
    assert type(tf_engine.storage) is journal_backend.JournalStorage
    with _statements(db) as seen:
        tf_engine.prepare()
        tf_engine.storage.set_flow_state("RUNNING")
    assert not [s for s in seen if s[:3] == ["INSERT", "INTO", "atomdetails"]]
    assert not [s for s in seen if s[:2] == ["UPDATE", "flowdetails"]], seen
    run.flush()
    with contextlib.closing(stored.get_connection()) as conn:
        assert conn.get_flow_details(detail.uuid).state == "RUNNING"
    # A progress that reads as before is not saved; a new one is.
    with _statements(db) as seen:
        tf_engine.storage.set_task_progress("b", 0.0)
        run.flush()
    assert not [s for s in seen if s[:2] == ["UPDATE", "atomdetails"]], seen
    tf_engine.storage.set_task_progress("b", 0.5)
    run.flush()
    with contextlib.closing(stored.get_connection()) as conn:
        assert conn.get_atom_details(atoms["b"].uuid).meta["progress"] == 0.5
    # Any other flow state is written at once, fenced first.
    db.claim_traversal(stack.id, traversal, "c2:2222")
    with pytest.raises(exceptions.Fenced):
        tf_engine.storage.set_flow_state("REVERTING")
    with pytest.raises(exceptions.Fenced):
        run.close()


def _journal_rows(db, stack_id):
    with db._engine.connect() as conn:
        flows = conn.execute(sa.text("SELECT uuid FROM flowdetails WHERE parent_uuid = :s"),
                             {"s": stack_id}).scalars().all()
        atoms = conn.execute(sa.text(
            "SELECT COUNT(*) FROM atomdetails a JOIN flowdetails f ON a.parent_uuid = f.uuid "
            "WHERE f.parent_uuid = :s"), {"s": stack_id}).scalar()
    return set(flows), atoms


def test_a_journal_started_behind_lands_with_its_first_flush_or_not_at_all(engine, stack):
    """A run's journal starts with its next flush (runner.run_traversal does
    this): until then nothing of it is stored, then all of it is, and a run
    fenced before that flush leaves nothing."""
    db = engine.db
    traversal = db.get_stack(stack.id).current_traversal
    before, atoms_before = _journal_rows(db, stack.id)
    flow = graph_flow.Flow("start").add(_Noop("a"), _Noop("b"))

    db.claim_traversal(stack.id, traversal, "c1:1111")
    # No flush but the test's own: the flusher waits a minute after a write.
    run = _journal(db, stack.id, traversal, "c1:1111", flush_interval=60)
    detail = journal.copy_forward(run, stack.id, None, "run 2", {"run": 2}, flow=flow,
                                  behind=True)
    assert _journal_rows(db, stack.id) == (before, atoms_before)
    run.flush()
    assert _journal_rows(db, stack.id) == (before | {detail.uuid}, atoms_before + 2)

    db.claim_traversal(stack.id, traversal, "c2:2222")
    late = _journal(db, stack.id, traversal, "c2:2222", flush_interval=60)
    journal.copy_forward(late, stack.id, detail, "run 3", {"run": 3}, flow=flow, behind=True)
    db.claim_traversal(stack.id, traversal, "c3:3333")
    with pytest.raises(exceptions.Fenced):
        late.flush()
    assert _journal_rows(db, stack.id) == (before | {detail.uuid}, atoms_before + 2)
    for backend in (run, late):
        with contextlib.suppress(exceptions.Fenced):
            backend.close()


def _started_behind(db, stack):
    """A claimed run of the stack's traversal whose journal start (a flow of
    atoms "a" and "b") is queued, unflushed: (journal, flow detail)."""
    traversal = db.get_stack(stack.id).current_traversal
    flow = graph_flow.Flow("start").add(_Noop("a"), _Noop("b"))
    db.claim_traversal(stack.id, traversal, "c1:1111")
    run = _journal(db, stack.id, traversal, "c1:1111", flush_interval=60)
    return run, journal.copy_forward(run, stack.id, None, "run 2", {"run": 2}, flow=flow,
                                     behind=True)


def test_a_flow_detail_saved_while_its_atoms_are_flushed_queues_them_once(engine, stack):
    """The engine saves the flow detail (RUNNING, behind) while the flusher
    writes the run's journal start: the atoms being inserted must not be
    queued for a second insert."""
    db = engine.db
    run, detail = _started_behind(db, stack)
    detail.state = "RUNNING"
    saved = []

    def save():
        with contextlib.closing(run.get_connection()) as journal_conn:
            journal_conn.update_flow_details(detail)

    def during_insert(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith("INSERT INTO ATOMDETAILS") and not saved:
            # From the engine's thread, as TaskFlow does: it must not wait
            # for this flush (queuing the atoms again made it flush too).
            engine_thread = threading.Thread(target=save, daemon=True)
            engine_thread.start()
            engine_thread.join(10)
            saved.append(not engine_thread.is_alive())

    sa.event.listen(db._engine, "before_cursor_execute", during_insert)
    try:
        run.flush()
    finally:
        sa.event.remove(db._engine, "before_cursor_execute", during_insert)
    assert saved == [True]
    run.flush()  # the saved state; no second insert of the atoms
    with contextlib.closing(TaskflowBackend.for_database(db).get_connection()) as conn:
        stored = conn.get_flow_details(detail.uuid)
    assert stored.state == "RUNNING"
    assert sorted(a.name for a in stored) == ["a", "b"]
    run.close()


def test_states_written_before_a_journal_start_lands_go_into_its_inserts(engine, stack):
    """A run's journal start is queued behind; the states its atoms and flow
    reach before the next flush are written as those rows' inserts, not as
    updates after them."""
    db = engine.db
    run, detail = _started_behind(db, stack)
    atom = next(a for a in detail if a.name == "a")
    with contextlib.closing(run.get_connection()) as conn:
        atom.state = "SUCCESS"
        atom.results = {"out": 1}
        conn.update_atom_details(atom)
        detail.state = "RUNNING"
        conn.update_flow_details(detail)
    with _statements(db) as seen:
        run.flush()
    assert not [s for s in seen if s[0] == "UPDATE"], seen
    with contextlib.closing(TaskflowBackend.for_database(db).get_connection()) as conn:
        stored = conn.get_flow_details(detail.uuid)
    assert stored.state == "RUNNING"
    assert {a.name: (a.state, a.results) for a in stored} == {
        "a": ("SUCCESS", {"out": 1}), "b": ("PENDING", None)}
    # Once inserted, a later state is an update of the row.
    with contextlib.closing(run.get_connection()) as conn:
        atom.state = "REVERTED"
        conn.update_atom_details(atom)
    with _statements(db) as seen:
        run.flush()
    assert [s[:2] for s in seen if s[0] in ("INSERT", "UPDATE")] == [
        ["UPDATE", "atomdetails"]]
    assert _stored_state(db, detail.uuid, atom.uuid) == "REVERTED"
    run.close()
