"""Real conductor processes against the real ZooKeeper, for the functional tests.

Each test gets its own jobboard root path (boards under one root share a
trash folder, and jobs must not leak between tests), and its conductors
run as separate processes (``python -m nestedflow.conductor``) with a short
ZooKeeper session timeout so that crash tests see takeovers in seconds.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import sqlalchemy as sa
from kazoo.client import KazooClient

import nestedflow
from nestedflow.db import models

ZK_HOSTS = os.environ.get("NESTEDFLOW_TEST_ZK", "127.0.0.1:2181")
#: Distributed deployments announce settled stacks over RabbitMQ: a parent
#: stack's conductor learns at once that a child finished on another one.
TRANSPORT_URL = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")
#: ZooKeeper's minSessionTimeout in tools/zookeeper.sh is 4 s.
SESSION_TIMEOUT = 4.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def zookeeper_client():
    client = KazooClient(hosts=ZK_HOSTS, timeout=10.0)
    try:
        client.start(timeout=5)
    except Exception as error:
        raise RuntimeError(
            f"ZooKeeper is not running at {ZK_HOSTS}: start it with tools/zookeeper.sh "
            f"start (tools/test.sh does) ({error})") from error
    return client


def wait_for(predicate, timeout, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class Conductor:
    def __init__(self, name, process, log_path):
        self.name = name
        self.process = process
        self.log_path = log_path

    @property
    def pid(self):
        return self.process.pid

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def alive(self):
        return self.process.poll() is None

    def signal(self, signum):
        if self.alive():
            os.kill(self.pid, signum)


class Cluster:
    """Conductor processes on one jobboard root and one database."""

    def __init__(self, db_url, tmp_path, zk):
        self.db_url = db_url
        self.root = f"/nftest-{uuid.uuid4().hex[:12]}"
        self.jobboard_url = f"zookeeper://{ZK_HOSTS}{self.root}"
        self.tmp_path = tmp_path
        self.zk = zk
        #: name -> the latest conductor started under it
        self.conductors = {}
        self._all = []
        self._engines = []
        self.started = models.utcnow()

    # -- conductors -----------------------------------------------------------

    def start(self, name, *, job_slots=2, workers=4, max_attempts=None, wait=True, extra=()):
        log_path = self.tmp_path / f"{name}.log"
        if name in self.conductors:
            # A restart under the same name keeps the earlier log too.
            log_path = self.tmp_path / f"{name}-{uuid.uuid4().hex[:4]}.log"
        db_url, jobboard_url, transport_url = self.conductor_urls(name)
        cmd = [*self.command_prefix(name), sys.executable, "-m", "nestedflow.conductor",
               "--db-url", db_url, "--jobboard-url", jobboard_url,
               "--transport-url", transport_url,
               "--name", name, "--session-timeout", str(SESSION_TIMEOUT),
               "--job-slots", str(job_slots), "--workers", str(workers),
               "--log-file", str(log_path), *extra]
        if max_attempts is not None:
            cmd += ["--max-attempts", str(max_attempts)]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("NESTEDFLOW_DB_URL", None)
        out = open(self.tmp_path / f"{name}.out", "ab")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        out.close()
        conductor = Conductor(name, process, log_path)
        self.conductors[name] = conductor
        self._all.append(conductor)
        if wait:
            self.wait_registered(conductor)
        return conductor

    def conductor_urls(self, name):
        """The database, jobboard and transport URLs conductor ``name`` uses."""
        return self.db_url, self.jobboard_url, TRANSPORT_URL

    def command_prefix(self, name):
        """What runs conductor ``name``'s command (on another host, say)."""
        return []

    def start_many(self, names, **kwargs):
        started = [self.start(name, wait=False, **kwargs) for name in names]
        for conductor in started:
            self.wait_registered(conductor)
        return started

    def wait_registered(self, conductor, timeout=60):
        path = f"{self.root}/conductors/{conductor.name}"

        def registered():
            if not conductor.alive():
                raise AssertionError(
                    f"conductor {conductor.name} exited:\n{self.output(conductor)}")
            data = self.zk.exists(path) and self.zk.get(path)[0]
            return data and json.loads(data).get("pid") == conductor.pid

        wait_for(registered, timeout, what=f"conductor {conductor.name} to register")

    def output(self, conductor):
        with contextlib.suppress(FileNotFoundError):
            with open(self.tmp_path / f"{conductor.name}.out") as f:
                return conductor.log() + f.read()
        return conductor.log()

    def kill(self, conductor):
        conductor.signal(signal.SIGKILL)
        conductor.process.wait(10)

    def find_holder(self, stack_id):
        """The live conductor whose claim holds ``stack_id``'s job, if any."""
        jobs = f"{self.root}/jobs"
        for child in self.zk.get_children(jobs):
            if child.endswith(".lock"):
                continue
            with contextlib.suppress(Exception):
                data = json.loads(self.zk.get(f"{jobs}/{child}")[0])
                if data["details"]["kwargs"]["stack_id"] != stack_id:
                    continue
                owner = json.loads(self.zk.get(f"{jobs}/{child}.lock")[0])["owner"]
                conductor = self.conductors.get(owner.rsplit(".", 1)[0])
                if conductor is not None and conductor.alive():
                    return conductor
        return None

    def holder(self, stack_id, timeout=30):
        """Wait for a live conductor to hold ``stack_id``'s job."""
        return wait_for(lambda: self.find_holder(stack_id), timeout,
                        what=f"a conductor to claim stack {stack_id}")

    def jobs(self):
        path = f"{self.root}/jobs"
        if not self.zk.exists(path):
            return []  # nothing was ever posted to this board
        return [c for c in self.zk.get_children(path) if not c.endswith(".lock")]

    def trash(self):
        path = f"{self.root}/.trash"
        return {c: json.loads(self.zk.get(f"{path}/{c}")[0])
                for c in (self.zk.get_children(path) if self.zk.exists(path) else [])}

    def post_raw(self, details, name="evil job", client=None):
        """Post a job the way any ZooKeeper client could, bypassing the Engine
        (with ``client``: that client's credentials, if any)."""
        from nestedflow.dispatch import impl_zookeeper as jobboard

        url = jobboard.JobboardURL(self.jobboard_url)
        own = client is None
        client = client or jobboard.make_client(url)
        board = jobboard.Board("test-poster", url, client, emit_notifications=False)
        board.connect()
        try:
            return board.post(name, details=details)
        finally:
            board.close()
            if own:
                client.stop()
                client.close()

    def stop_all(self):
        for conductor in self.conductors.values():
            if conductor.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(conductor.pid, signal.SIGCONT)
                conductor.signal(signal.SIGTERM)
        for conductor in self.conductors.values():
            try:
                conductor.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill(conductor)

    # -- the poster ---------------------------------------------------------

    def engine(self):
        engine = nestedflow.Engine(db_url=self.db_url, jobboard_url=self.jobboard_url,
                                   transport_url=TRANSPORT_URL)
        self._engines.append(engine)
        return engine

    def close(self):
        # Graceful shutdown has a test of its own; here it would only cost
        # seconds per conductor (closing its RabbitMQ listener).
        for conductor in self._all:
            if conductor.alive():
                self.kill(conductor)
        self._forget_objects()
        for engine in self._engines:
            engine.close()
        with contextlib.suppress(Exception):
            self.zk.delete(self.root, recursive=True)

    def _forget_objects(self):
        """Leave no live physical object behind for tests that count them all
        (the stacks of this test stay in the database, settled)."""
        engine = sa.create_engine(self.db_url)
        try:
            with engine.begin() as conn:
                ours = sa.select(models.Stack.id).where(models.Stack.created_at >= self.started)
                conn.execute(sa.update(models.PhysicalObject)
                             .where(models.PhysicalObject.deleted_at.is_(None),
                                    models.PhysicalObject.stack_id.in_(ours))
                             .values(deleted_at=models.utcnow()))
        finally:
            engine.dispose()


# -- reading the database directly -----------------------------------------


class Probe:
    """Raw SQL views of the state (and row locks, to hold a conductor still)."""

    def __init__(self, db_url):
        self.engine = sa.create_engine(db_url)
        self.dialect = self.engine.dialect.name

    def close(self):
        self.engine.dispose()

    def events(self, stack_id):
        with self.engine.connect() as conn:
            return list(conn.execute(
                sa.select(models.Event).where(models.Event.stack_id == stack_id)
                .order_by(models.Event.id)).mappings())

    def resources(self, stack_id):
        with self.engine.connect() as conn:
            return list(conn.execute(
                sa.select(models.Resource).where(models.Resource.stack_id == stack_id)
                .order_by(models.Resource.id)).mappings())

    def stack(self, stack_id):
        with self.engine.connect() as conn:
            return conn.execute(sa.select(models.Stack).where(models.Stack.id == stack_id)
                                ).mappings().one()

    def physical(self, stack_id):
        with self.engine.connect() as conn:
            return list(conn.execute(
                sa.select(models.PhysicalObject)
                .where(models.PhysicalObject.stack_id == stack_id)).mappings())

    @contextlib.contextmanager
    def row_locks(self, resource_ids):
        """Hold ``SELECT ... FOR UPDATE`` on resource rows: a conductor that
        tries to lock one of those resources blocks until we let go."""
        conn = self.engine.connect()
        trans = conn.begin()
        try:
            conn.execute(sa.select(models.Resource.id)
                         .where(models.Resource.id.in_(list(resource_ids)))
                         .with_for_update()).all()
            yield
        finally:
            trans.rollback()
            conn.close()

    def lock_waiters(self):
        """How many transactions wait for a row lock right now."""
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                return conn.execute(sa.text(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar()
            return conn.execute(sa.text(
                "SELECT count(*) FROM information_schema.innodb_trx "
                "WHERE trx_state = 'LOCK WAIT'")).scalar()
