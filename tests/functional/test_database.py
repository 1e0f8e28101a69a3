"""The state database: connection handling, and resource writes with their events."""

import datetime
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc

from nestedflow import exceptions
from nestedflow.db import api, models


def _probe(url, name, column):
    """A synced database, its engine, and a two-column table (not created)."""
    db = api.Database(url)
    db.sync()
    table = sa.Table(name, sa.MetaData(),
                     sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column(column, sa.Integer, nullable=False))
    return db, db._engine, table


def _dbapi_connection(session):
    return session.connection().connection.dbapi_connection


def test_sqlite_connections_are_reused_and_keep_oslo_db_setup(sqlite_url):
    db = api.Database(sqlite_url)
    db.sync()
    try:
        with db.writer() as session:
            first = _dbapi_connection(session)
        with db.reader() as session:
            assert _dbapi_connection(session) is first
            # oslo.db's connect listener still ran: it adds REGEXP.
            assert session.execute(sa.text("SELECT 'nested' REGEXP 'st'")).scalar() == 1
    finally:
        db.dispose()


def test_a_pooled_connection_never_skips_its_begin(sqlite_url):
    """oslo.db marks a connection in a transaction and skips BEGIN while the
    mark is there; a mark left by an earlier user of a pooled connection
    must not turn the next user's statements into autocommits."""
    db = api.Database(sqlite_url)
    db.sync()
    engine = db._engine
    try:
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            conn.info["in_transaction"] = True  # left behind, never ended
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection is raw
            conn.exec_driver_sql("SELECT 1")
            assert raw.in_transaction
    finally:
        db.dispose()


def test_a_refused_resource_write_records_no_event(engine, stack_name):
    """A compare-and-swap write and its event land together or not at all
    (on PostgreSQL they are one statement)."""
    template = {"heat_template_version": "2018-08-31",
                "resources": {"x": {"type": "OS::Heat::None"}}}
    stack = engine.wait(engine.create_stack(stack_name, template).id, timeout=60)
    db = engine.db

    def events():
        return [(e.action, e.status, e.engine_id) for e in engine.list_events(stack.id)
                if e.resource_name == "x"]

    before = events()
    row = db.lock_resource(db.list_resources(stack.id)[0].id, "T/run")
    stale = db.list_resources(stack.id)[0]  # a view from before the write below
    assert stale.atomic_key == row.atomic_key
    written = db.update_resource(row, "T/run", event="probe", action="CHECK",
                                 status="IN_PROGRESS", status_reason="probing")
    assert events() == [*before, ("CHECK", "IN_PROGRESS", "probe")]
    # A write from the stale view: refused, and no event.
    with pytest.raises(exceptions.ResourceLocked):
        db.update_resource(stale, "T/run", event="probe", action="CHECK", status="COMPLETE")
    assert events() == [*before, ("CHECK", "IN_PROGRESS", "probe")]
    assert db.list_resources(stack.id)[0].status == written.status == "IN_PROGRESS"


def test_postgresql_executemany_is_batched_and_lands_every_row(pg_url):
    """psycopg2 sends an executemany() as pages of statements (not a round
    trip per row): the journal's flushes and a stack's edges rely on every
    row of a batch landing, across page boundaries."""
    from sqlalchemy.dialects.postgresql import psycopg2 as pg_psycopg2

    db, engine, table = _probe(pg_url, "nf_batch_probe", "v")
    try:
        assert engine.dialect.executemany_mode is pg_psycopg2.EXECUTEMANY_VALUES_PLUS_BATCH
        table.drop(engine, checkfirst=True)
        table.create(engine)
        with engine.begin() as conn:
            conn.execute(table.insert(), [{"id": i, "v": 0} for i in range(250)])
            conn.execute(table.update().where(table.c.id == sa.bindparam("k"))
                         .values(v=sa.bindparam("nv")),
                         [{"k": i, "nv": i * 2} for i in range(250)])
        with engine.connect() as conn:
            rows = dict(conn.execute(sa.select(table.c.id, table.c.v)).all())
        assert rows == {i: i * 2 for i in range(250)}
    finally:
        table.drop(engine, checkfirst=True)
        db.dispose()


def test_sqlite_transactions_of_many_threads_take_turns_and_all_land(sqlite_url):
    """This process's SQLite transactions queue on a lock of their own before
    SQLite's (whose busy handler sleeps between tries). However a
    transaction ends -- commit, rollback, an error, a connection handed back
    mid-transaction -- the next one gets its turn: 8 threads x 40
    transactions finish, far within the busy timeout a lost turn would cost
    every later transaction, and every commit lands."""
    db, engine, table = _probe(sqlite_url, "nf_turn_probe", "t")
    table.create(engine)
    committed, errors = [], []

    def worker(t):
        try:
            for i in range(40):
                key = t * 1000 + i
                way = i % 4
                if way == 0:
                    with engine.begin() as conn:
                        conn.execute(table.insert(), {"id": key, "t": t})
                    committed.append(key)
                elif way == 1:
                    with engine.connect() as conn:
                        conn.execute(table.insert(), {"id": key, "t": t})
                        conn.rollback()
                elif way == 2:
                    with engine.connect() as conn:  # closed mid-transaction
                        conn.execute(table.insert(), {"id": key, "t": t})
                else:
                    with pytest.raises(db_exc.DBDuplicateEntry):
                        with engine.begin() as conn:
                            conn.execute(table.insert(), {"id": t * 1000, "t": t})
        except Exception as error:  # reported below, from the test's thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    started = time.monotonic()
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not errors
        assert not any(thread.is_alive() for thread in threads)
        # A turn left taken makes every later transaction wait out the busy
        # timeout first: 320 of them would take half an hour.
        assert time.monotonic() - started < api.SQLITE_BUSY_TIMEOUT * 6
        with engine.connect() as conn:
            assert sorted(conn.execute(sa.select(table.c.id)).scalars()) == sorted(committed)
    finally:
        db.dispose()


def test_returning_a_connection_does_not_yield_the_gil(db_url, monkeypatch):
    """oslo.db sleeps 0 s on every connection check-in for eventlet's sake;
    with real threads that only queues the thread for the GIL again."""
    db = api.Database(db_url)
    db.sync()
    try:
        with db.writer() as session:
            session.execute(sa.text("SELECT 1"))
        sleeps = []
        monkeypatch.setattr(time, "sleep", sleeps.append)
        for _ in range(3):
            with db._engine.begin() as conn:
                conn.execute(sa.text("SELECT 1"))
        assert sleeps == []
    finally:
        db.dispose()


def test_a_connection_dropped_while_idle_is_replaced_before_use(shared_db_url, monkeypatch):
    """Connections are pinged only after sitting idle ([database]
    ping_idle_after): one the server dropped meanwhile is found dead and
    replaced at checkout, so the transaction that takes it succeeds; one in
    steady use is not pinged."""
    from nestedflow.conf import CONF

    server = "postgresql" if shared_db_url.startswith("postgresql") else "mysql"

    CONF.set_override("ping_idle_after", 0.2, group="database")
    try:
        db = api.Database(shared_db_url)
    finally:
        CONF.clear_override("ping_idle_after", group="database")
    db.sync()
    engine = db._engine
    pings = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda conn: pings.append(conn) or ping(conn))
    backend = ("SELECT pg_backend_pid()" if server == "postgresql" else "SELECT CONNECTION_ID()")
    kill = ("SELECT pg_terminate_backend({})" if server == "postgresql" else "KILL {}")
    try:
        with engine.begin() as conn:
            victim = conn.exec_driver_sql(backend).scalar()
        with engine.begin() as conn:  # in steady use: no ping
            assert conn.exec_driver_sql(backend).scalar() == victim
        assert pings == []
        admin = sa.create_engine(shared_db_url, poolclass=sa.pool.NullPool)
        with admin.begin() as conn:
            conn.exec_driver_sql(kill.format(victim))
        admin.dispose()
        time.sleep(0.4)
        with engine.begin() as conn:
            assert conn.exec_driver_sql(backend).scalar() != victim
        assert pings
    finally:
        db.dispose()


def test_a_stack_state_write_returns_the_row_and_lands_with_its_event(engine, stack_name):
    """set_stack_state: the state and its event land together (one statement
    on PostgreSQL) and the stack comes back as written where the database
    can return it; a writer that no longer owns the traversal changes
    nothing and records nothing."""
    template = {"heat_template_version": "2018-08-31",
                "resources": {"x": {"type": "OS::Heat::None"}}}
    stack = engine.wait(engine.create_stack(stack_name, template).id, timeout=60)
    db = engine.db
    before = db.get_stack(stack.id)

    def stack_events():
        return [(e.action, e.status, e.status_reason, e.traversal_id)
                for e in db.list_events(stack.id) if e.resource_name is None]

    events = stack_events()
    written = db.set_stack_state(stack.id, before.current_traversal, "CHECK", "COMPLETE",
                                 "probed", owner=before.traversal_owner, outputs={"k": [1]})
    after = db.get_stack(stack.id)
    assert (after.action, after.status, after.status_reason, after.outputs) == (
        "CHECK", "COMPLETE", "probed", {"k": [1]})
    assert after.atomic_key == before.atomic_key + 1
    if db._engine.dialect.update_returning:
        assert {c: getattr(written, c) for c in models.StackRow.__slots__} == {
            c: getattr(after, c) for c in models.StackRow.__slots__}
    else:  # MariaDB: no UPDATE ... RETURNING, and no read of its own
        assert written is None
    assert stack_events() == [*events, ("CHECK", "COMPLETE", "probed",
                                        before.current_traversal)]

    for traversal, owner in (("another-traversal", None),
                             (before.current_traversal, "another-run")):
        with pytest.raises(exceptions.TraversalSuperseded):
            db.set_stack_state(stack.id, traversal, "CHECK", "FAILED", "late", owner=owner)
    assert stack_events() == [*events, ("CHECK", "COMPLETE", "probed",
                                        before.current_traversal)]
    assert db.get_stack(stack.id).atomic_key == after.atomic_key


def test_postgresql_runs_one_statement_transactions_without_begin_and_commit(
        make_engine, pg_url, stack_name):
    """On PostgreSQL the reads and writes that are one statement (resource
    writes, the claim, the settle, stack and ownership reads) run in
    autocommit -- one round trip instead of BEGIN, statement, COMMIT --
    while transactions of several statements (storing a stack, the
    journal) keep theirs. A pooled connection goes back to transactional
    use without a statement of its own: a transaction after it that fails
    part-way leaves nothing behind."""
    from nestedflow.conf import CONF

    # One pooled connection: every transaction below takes the same one.
    CONF.set_override("max_pool_size", 1, group="database")
    CONF.set_override("max_overflow", 0, group="database")
    try:
        engine = make_engine(pg_url, max_workers=1)
    finally:
        CONF.clear_override("max_pool_size", group="database")
        CONF.clear_override("max_overflow", group="database")
    db = engine.db
    seen = []

    def on_statement(conn, cursor, statement, parameters, context, executemany):
        raw = conn.connection.dbapi_connection
        seen.append((statement.split(None, 2)[:2], raw.autocommit, raw.isolation_level))

    sa.event.listen(db._engine, "before_cursor_execute", on_statement)
    try:
        template = {"heat_template_version": "2018-08-31",
                    "resources": {"a": {"type": "OS::Heat::None"},
                                  "b": {"type": "OS::Heat::None", "depends_on": "a"}}}
        stack = engine.wait(engine.create_stack(stack_name, template).id, timeout=60)
        engine._dispatcher.join()
    finally:
        sa.event.remove(db._engine, "before_cursor_execute", on_statement)
    assert stack.status == "COMPLETE"
    autocommit = [words for words, auto, _ in seen if auto]
    transactional = [words for words, auto, _ in seen if not auto]
    # Each resource's write with its events, and the settle: CTEs. The
    # resource writes' CTE is prepared once on the session (db.precompiled)
    # and then executed: in the same autocommit.
    prepared = [name for verb, name in autocommit if verb == "PREPARE"]
    assert len(prepared) == 1 and prepared[0].startswith("nf_with_resources_")
    assert autocommit.count(["EXECUTE", prepared[0]]) == 2
    assert autocommit.count(["WITH", "written"]) == 1
    assert ["UPDATE", "stacks"] in autocommit  # the claim
    # The journal's fence: the first statement of its write transaction,
    # holding a share lock on the stack row until the commit.
    assert ["SELECT", "stacks.current_traversal,"] in transactional
    assert ["INSERT", "INTO"] not in autocommit
    assert {"INSERT INTO"} == {" ".join(words) for words in transactional
                               if words[0] == "INSERT"}
    assert ["INSERT", "INTO"] in transactional  # the stack, its template, the journal
    # Nothing ever set an explicit isolation level (that would be a SET
    # statement of its own): back from autocommit is the server's default.
    assert {level for _, _, level in seen} == {None}

    templates = sa.select(sa.func.count()).select_from(models.RawTemplate.__table__)
    with db._engine.connect() as conn:
        before = conn.execute(templates).scalar()
    db.get_stack(stack.id)  # the pool's one connection, in autocommit
    with pytest.raises(db_exc.DBError):
        db.create_stack({"id": "not-stored", "name": "not-stored", "action": "CREATE",
                         "status": "IN_PROGRESS", "current_traversal": "t"},
                        {"template": {}, "files": {}, "environment": {}, "parameters": {}},
                        [{"name": None, "type": "OS::Heat::None", "requires": []}])
    with pytest.raises(exceptions.StackNotFound):
        db.get_stack("not-stored")
    with db._engine.connect() as conn:
        assert conn.execute(templates).scalar() == before


def test_engines_starting_together_all_record_their_heartbeat(db_url):
    """Engines (conductors) starting at the same moment each insert their
    heartbeat row. An UPDATE-then-INSERT deadlocked on MariaDB (the UPDATE
    that finds no row takes a gap lock the other engine's INSERT waits on);
    the beat is one upsert, so every engine's first beat succeeds, and a
    second beat moves the row's time instead of adding one."""
    dbs = [api.Database(db_url) for _ in range(6)]
    dbs[0].sync()
    errors = []
    # The session's database is shared with other tests' engines.
    prefix = uuid.uuid4().hex[:8]
    try:
        for attempt in range(5):
            start = threading.Barrier(len(dbs))

            def first_beat(db, engine_id, start=start):
                start.wait()
                try:
                    db.beat(engine_id, "host", 1, 5.0)
                except Exception as error:  # noqa: BLE001 -- reported below
                    errors.append(error)

            threads = [threading.Thread(target=first_beat,
                                        args=(db, f"{prefix}-{attempt}-{n}"))
                       for n, db in enumerate(dbs)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        assert errors == []
        table = models.EngineHeartbeat.__table__
        with dbs[0]._engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(table)
                                .where(table.c.id.like(f"{prefix}-%"))).scalar() == 30
            before = conn.execute(sa.select(table.c.updated_at)
                                  .where(table.c.id == f"{prefix}-0-0")).scalar()
        time.sleep(0.01)
        dbs[0].beat(f"{prefix}-0-0", "host", 1, 7.0)
        with dbs[0]._engine.connect() as conn:
            rows = conn.execute(sa.select(table.c.updated_at, table.c.report_interval)
                                .where(table.c.id == f"{prefix}-0-0")).all()
        assert len(rows) == 1 and rows[0][1] == 7.0 and rows[0][0] > before
        assert dbs[0].engine_alive(f"{prefix}-0-0")
    finally:
        for db in dbs:
            db.dispose()


def test_postgresql_connections_give_up_on_a_silent_peer(pg_url):
    """A connection across a partition waits for TCP's back-off, several
    seconds past the heal, unless the client bounds it: every connection
    sets libpq's connect, user and keepalive timeouts (the idle-transaction
    bound), so the statement fails as a disconnect and is tried again on a
    new connection (tests/functional/test_partitions.py)."""
    db = api.Database(pg_url)
    try:
        with db._engine.connect() as conn:
            params = conn.connection.dbapi_connection.get_dsn_parameters()
    finally:
        db.dispose()
    assert params["connect_timeout"] == "2"
    assert int(params["tcp_user_timeout"]) >= 1000
    assert params["keepalives"] == "1"


def test_an_outbox_mark_taken_over_is_not_taken_again_while_its_taker_posts(
        engine, stack_name):
    """The outbox (db/heartbeats.py): a traversal a dead engine stored and
    perhaps never posted is listed by ``unposted_stacks`` for live engines
    to take over and post. Once one took it over, the others must leave it
    alone while that engine lives and may still be posting it -- two
    conductors beating together both posted the job when the stack's
    stored time alone said its post was overdue -- and take it again only
    when that post is overdue in turn (the taker's post failed)."""
    template = {"heat_template_version": "2018-08-31",
                "resources": {"x": {"type": "OS::Heat::None"}}}
    stack = engine.db.get_stack(engine.wait(engine.create_stack(stack_name, template).id,
                                            timeout=60).id)
    db, stacks = engine.db, models.Stack.__table__
    dead, taker = f"gone-{uuid.uuid4().hex[:8]}@unposted", f"taker-{uuid.uuid4().hex[:8]}"
    long_ago = models.utcnow() - datetime.timedelta(hours=1)
    with db._engine.begin() as conn:
        conn.execute(sa.update(stacks).where(stacks.c.id == stack.id).values(
            status="IN_PROGRESS", traversal_owner=dead, updated_at=long_ago))

    def listed():
        return [row for row in db.unposted_stacks() if row[0] == stack.id]

    try:
        db.beat(taker, "host", 1, 0.2)
        assert listed() == [(stack.id, stack.current_traversal, "CREATE", dead)]
        assert db.take_over_unposted(stack.id, stack.current_traversal, dead, f"{taker}@unposted")
        assert not db.take_over_unposted(stack.id, stack.current_traversal, dead, "other@unposted")
        db.beat(taker, "host", 1, 0.2)
        assert listed() == []
        time.sleep(0.8)  # past three of the taker's beats: its post is overdue
        db.beat(taker, "host", 1, 0.2)
        assert listed() == [(stack.id, stack.current_traversal, "CREATE", f"{taker}@unposted")]
    finally:
        db.forget_engine(taker)
        with db._engine.begin() as conn:
            conn.execute(sa.update(stacks).where(stacks.c.id == stack.id).values(
                status="COMPLETE", traversal_owner=None))
