"""Faults of the real servers in the middle of a run, confined to what the
test owns.

ZooKeeper: a server of the test's own (another port, a temporary
directory) is stopped for three seconds and started again while two
conductors run a stack.

RabbitMQ: the conductors reach it through a TCP proxy the test owns, which
drops every connection while a parent stack waits for its nested stack.

PostgreSQL: every connection to the test's own database is terminated
(``pg_terminate_backend``, as a restarted server or a failover would)
several times while a stack is being created; the stack must still settle
as asked, with one physical object per resource and nothing stuck.
"""

import contextlib
import os
import socket
import subprocess
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
import yaml

pytestmark = pytest.mark.functional


def _template(chains=2, length=3, wait=0.4):
    resources = {}
    for c in range(chains):
        for i in range(length):
            resources[f"c{c}r{i}"] = {
                "type": "OS::Heat::TestResource",
                "properties": {"value": f"{c}-{i}", "wait_secs": wait},
                **({"depends_on": [f"c{c}r{i - 1}"]} if i else {})}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _terminate_backends(admin):
    """Terminate every other session of the test's database; how many."""
    with admin.connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()


def test_postgresql_connections_terminated_mid_run(make_engine, pg_url, stack_name):
    engine = make_engine(pg_url)
    admin = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        stack = engine.create_stack(stack_name, _template())
        terminated, stop = [], threading.Event()

        def chaos():
            # Three rounds while the create runs, 0.7 s apart.
            while not stop.is_set() and len(terminated) < 3:
                if stop.wait(0.7):
                    return
                terminated.append(_terminate_backends(admin))

        thread = threading.Thread(target=chaos, daemon=True)
        thread.start()
        try:
            final = engine.wait(stack.id, timeout=120)
        finally:
            stop.set()
            thread.join(10)
        print(f"sessions terminated per round: {terminated}")
        assert sum(terminated) > 0
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        rows = engine.db.list_resources(stack.id)
        live = engine.store.live(stack.id)
        assert sorted(o.resource_name for o in live) == sorted(r.name for r in rows)
        assert sorted(o.id for o in live) == sorted(r.physical_id for r in rows)
        assert all(r.engine_id is None for r in rows)

        _terminate_backends(admin)
        final = engine.wait(engine.delete_stack(stack.id).id, timeout=120)
        assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
        assert engine.store.live(stack.id) == []
    finally:
        admin.dispose()


# -- ZooKeeper: a server of the test's own, stopped and started again ------

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _OwnZooKeeper:
    """A single-node ZooKeeper on a port and in a directory of its own
    (tools/zookeeper.sh), so stopping it touches nobody else's tests."""

    def __init__(self, tmp_path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.env = dict(os.environ, NESTEDFLOW_ZK_PORT=str(self.port),
                        NESTEDFLOW_ZK_DIR=str(tmp_path / "zk"))
        self.hosts = f"127.0.0.1:{self.port}"

    def _run(self, command):
        subprocess.run([os.path.join(ROOT_DIR, "tools", "zookeeper.sh"), command],
                       env=self.env, check=True, capture_output=True, timeout=60)

    def start(self):
        self._run("start")

    def stop(self):
        self._run("stop")


@pytest.fixture
def own_zookeeper(tmp_path):
    zk = _OwnZooKeeper(tmp_path)
    zk.start()
    yield zk
    zk.stop()


def test_zookeeper_stopped_and_restarted_mid_run(pg_url, tmp_path, own_zookeeper):
    from conductor_cluster import Cluster, Probe, wait_for
    from kazoo.client import KazooClient

    client = KazooClient(hosts=own_zookeeper.hosts, timeout=10.0)
    client.start(timeout=15)
    cluster = Cluster(pg_url, tmp_path, client)
    cluster.jobboard_url = f"zookeeper://{own_zookeeper.hosts}{cluster.root}"
    probe = Probe(pg_url)
    try:
        engine = cluster.engine()
        cluster.start_many(["z1", "z2"])
        template = _template(chains=1, length=4, wait=1.0)
        stack = engine.create_stack(f"zk-{uuid.uuid4().hex[:6]}", template)
        wait_for(lambda: any(e["resource_name"] == "c0r0" and e["status"] == "IN_PROGRESS"
                             for e in probe.events(stack.id)), 60, what="the first action")
        own_zookeeper.stop()
        time.sleep(3)
        own_zookeeper.start()
        final = engine.wait(stack.id, timeout=120)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        rows = probe.resources(stack.id)
        live = [o for o in probe.physical(stack.id) if o["deleted_at"] is None]
        assert sorted(o["resource_name"] for o in live) == sorted(r["name"] for r in rows)
        assert all(r["engine_id"] is None for r in rows)
        # Each finished action was done once; one may have been redone.
        starts = [e["resource_name"] for e in probe.events(stack.id)
                  if e["status"] == "IN_PROGRESS" and e["resource_name"]]
        assert set(starts) == {r["name"] for r in rows} and len(starts) <= len(rows) + 1
        # The conductors serve again: a delete completes.
        final = engine.wait(engine.delete_stack(stack.id).id, timeout=120)
        assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
    finally:
        cluster.close()
        probe.close()
        client.stop()
        client.close()


# -- RabbitMQ: every connection through a proxy the test owns, cut -------------


class _CuttingProxy:
    """A TCP proxy in front of RabbitMQ that can drop every connection it
    carries (only this test's clients go through it)."""

    def __init__(self, target=("127.0.0.1", 5672)):
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._sockets = set()
        self._lock = threading.Lock()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def cut(self):
        """Drop every connection open now; how many."""
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.cuts += len(sockets) // 2
        return len(sockets) // 2

    def close(self):
        self._server.close()
        self.cut()


def test_rabbitmq_connections_cut_while_a_parent_waits(pg_url, tmp_path, monkeypatch):
    import conductor_cluster
    from conductor_cluster import Cluster, Probe, wait_for, zookeeper_client

    proxy = _CuttingProxy()
    monkeypatch.setattr(conductor_cluster, "TRANSPORT_URL",
                        f"rabbit://guest:guest@127.0.0.1:{proxy.port}/")
    zk = zookeeper_client()
    cluster = Cluster(pg_url, tmp_path, zk)
    probe = Probe(pg_url)
    child = {"heat_template_version": "2018-08-31", "resources": {
        "inner": {"type": "OS::Heat::TestResource",
                  "properties": {"value": "in", "wait_secs": 2}}}}
    template = {"heat_template_version": "2018-08-31", "resources": {
        "nested": {"type": "OS::Heat::Stack",
                   "properties": {"template": yaml.safe_dump(child)}},
        "after": {"type": "OS::Heat::TestResource", "depends_on": ["nested"],
                  "properties": {"value": "after"}}}}
    try:
        engine = cluster.engine()
        # One slot each: the child runs on the other conductor, so the parent
        # learns that it settled from a notification -- or, cut off, from
        # its periodic look at the database.
        cluster.start_many(["q1", "q2"], job_slots=1)
        stack = engine.create_stack(f"mq-{uuid.uuid4().hex[:6]}", template)

        def child_started():
            with probe.engine.connect() as conn:
                return conn.execute(sa.text(
                    "SELECT 1 FROM events e JOIN stacks s ON s.id = e.stack_id "
                    "WHERE s.parent_id = :p AND e.resource_name = 'inner' "
                    "AND e.status = 'IN_PROGRESS'"), {"p": stack.id}).first()

        wait_for(child_started, 60, what="the nested stack's action")
        assert proxy.cut() > 0
        time.sleep(1)
        proxy.cut()  # the reconnections too, once
        final = engine.wait(stack.id, timeout=120)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        with probe.engine.connect() as conn:
            ids = [stack.id, *conn.execute(sa.text(
                "SELECT id FROM stacks WHERE parent_id = :p"), {"p": stack.id}).scalars()]
        live = [o for i in ids for o in probe.physical(i) if o["deleted_at"] is None]
        assert sorted(o["resource_name"] for o in live) == ["after", "inner"]
        final = engine.wait(engine.delete_stack(stack.id).id, timeout=120)
        assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
        assert [o for i in ids for o in probe.physical(i) if o["deleted_at"] is None] == []
    finally:
        cluster.close()
        probe.close()
        proxy.close()
        zk.stop()
        zk.close()


# -- PostgreSQL: each statement of a run meets a dropped connection --------


def _end_session(admin, pid):
    """Ends server session ``pid`` and returns once the server has ended
    it: the timeout makes pg_terminate_backend wait, so nothing the session
    sends next can slip through before the end."""
    with admin.connect() as conn:
        conn.execute(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": pid})


class _DropEachStatementOnce:
    """Terminates the server session under every distinct statement the
    first time it is about to go out, and waits until the server has
    ended it: the statement then fails as it would on a connection a
    restarted or failed-over server dropped while it sat in the pool."""

    def __init__(self, sql_engine, admin):
        self._admin = admin
        self._seen = set()
        self._lock = threading.Lock()
        self.dropped = []
        sa.event.listen(sql_engine, "before_cursor_execute", self._before)

    def _before(self, conn, cursor, statement, parameters, context, executemany):
        key = " ".join(statement.split())
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        _end_session(self._admin, cursor.connection.info.backend_pid)
        self.dropped.append(key)


def test_every_statement_of_a_stack_lifecycle_survives_a_dropped_connection(
        make_engine, pg_url, stack_name):
    """A class test for the retries of db.retrying: a statement a run
    issues outside a retried call fails its resource or its stack when the
    connection under it was dropped -- a nested stack's delete once failed
    DELETE_FAILED that way in the partition tests (the listing of a
    deleted stack's children was not retried). Here every distinct
    statement of a create, an update and a delete of a tree with a
    nested stack meets a dropped connection the first time it runs."""
    engine = make_engine(pg_url)
    admin = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    template = {
        "heat_template_version": "2018-08-31",
        "parameters": {"value": {"type": "string", "default": "v1"}},
        "resources": {
            "group": {"type": "OS::Heat::ResourceGroup",
                      "properties": {"count": 2, "resource_def": {
                          "type": "OS::Heat::TestResource",
                          "properties": {"value": {"get_param": "value"}}}}},
            "plain": {"type": "OS::Heat::TestResource",
                      "properties": {"value": {"get_param": "value"}}},
            "free": {"type": "OS::Heat::None", "depends_on": ["plain"]},
        },
    }
    try:
        engine.list_stacks()  # migrated and warmed up before the drops
        drops = _DropEachStatementOnce(engine.db.sql_engine, admin)
        stack = engine.create_stack(stack_name, template)
        final = engine.wait(stack.id, timeout=120)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        created = len(drops.dropped)

        final = engine.wait(engine.update_stack(stack.id, template,
                                                parameters={"value": "v2"}).id, timeout=120)
        assert (final.action, final.status) == ("UPDATE", "COMPLETE"), final.status_reason

        final = engine.wait(engine.delete_stack(stack.id).id, timeout=120)
        assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
        print(f"statements that met a dropped connection: {created} in the create, "
              f"{len(drops.dropped)} in all")
        assert created > 10
        tree = [stack.id] + [child.id for child in engine.db.list_children(stack.id)]
        assert len(tree) == 2
        assert all(engine.db.get_stack(sid).deleted_at is not None for sid in tree)
        assert all(engine.store.live(sid) == [] for sid in tree)
    finally:
        admin.dispose()


class _LoseCommitAnswerOnce:
    """The first commit of a transaction that inserted into ``table``
    reaches the server, and its answer is lost: the server session ends
    right after it (``pg_terminate_backend``), so the client sees the
    dropped connection of an ambiguous commit and tries the call again."""

    def __init__(self, sql_engine, admin, table):
        self._admin = admin
        self._marker = f"INSERT INTO {table} "
        self.lost = 0
        sa.event.listen(sql_engine, "before_cursor_execute", self._statement)
        sa.event.listen(sql_engine, "commit", self._commit)

    def _statement(self, conn, cursor, statement, parameters, context, executemany):
        if statement.startswith(self._marker):
            conn.info[self] = True

    def _commit(self, conn):
        if not conn.info.pop(self, False) or self.lost:
            return
        self.lost += 1
        dbapi = conn.connection.dbapi_connection
        # Committed through a cursor: psycopg2 still believes a transaction
        # is open, so the driver's own COMMIT goes to the ended session
        # and fails as a dropped connection does.
        with dbapi.cursor() as cursor:
            cursor.execute("COMMIT")
        _end_session(self._admin, dbapi.info.backend_pid)


def _rows(admin, table):
    with admin.connect() as conn:
        return [row[0] for row in conn.execute(sa.text(f"SELECT id FROM {table}"))]


def test_a_create_whose_commit_answer_was_lost_makes_one_row(make_engine, pg_url, stack_name):
    """A call tried again after a commit whose answer a dropped connection
    lost (db.retrying) must find its first attempt's row: a snapshot, a
    software config and a deployment made by a request once came twice,
    each attempt choosing an id of its own."""
    engine = make_engine(pg_url)
    admin = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    try:
        stack = engine.create_stack(stack_name, {
            "heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "OS::Heat::None"}}})
        engine.wait(stack.id, timeout=60)

        faults = _LoseCommitAnswerOnce(engine.db.sql_engine, admin, "stack_snapshots")
        snapshot = engine.stack_snapshot(stack.id, name="once")
        assert faults.lost == 1
        assert _rows(admin, "stack_snapshots") == [snapshot["id"]]

        faults = _LoseCommitAnswerOnce(engine.db.sql_engine, admin, "software_config")
        config = engine.create_software_config(group="script", name="cfg", config="echo",
                                               inputs=[], outputs=[], options={})
        assert faults.lost == 1
        assert _rows(admin, "software_config") == [config["id"]]

        faults = _LoseCommitAnswerOnce(engine.db.sql_engine, admin, "software_deployment")
        deployment = engine.create_software_deployment(
            server_id="server-1", config_id=config["id"], input_values={}, action="CREATE",
            status="COMPLETE", status_reason="", stack_user_project_id=None)
        assert faults.lost == 1
        assert _rows(admin, "software_deployment") == [deployment["id"]]
    finally:
        admin.dispose()
