"""TLS on the links to ZooKeeper, RabbitMQ and PostgreSQL (issue 32), each
against a TLS endpoint the test owns (tests/functional/tls_servers.py):

* ZooKeeper: a server of its own with a secureClientPort and SASL
  (DIGEST-MD5) logins; a conductor joins it with kazoo's use_ssl, ca,
  certfile and keyfile and SASL credentials, and runs a stack;
* RabbitMQ: a TLS-terminating proxy in front of the machine's broker;
  nestedflow's stack events travel through it with oslo.messaging's
  ``ssl``/``ssl_ca_file`` options in the transport URL's query;
* PostgreSQL: an ``initdb`` server of its own with ssl=on, reached with
  ``sslmode=verify-full&sslrootcert=`` in the database URL.

With a CA that did not sign the server's certificate each fails at once
with one line naming the link.
"""

import os
import subprocess
import sys
import threading
import time
import uuid

import pytest
import sqlalchemy as sa
import tls_servers
from conductor_cluster import ROOT, wait_for
from kazoo import exceptions as k_exc
from kazoo.client import KazooClient

from nestedflow import exceptions
from nestedflow.dispatch import zookeeper
from nestedflow.messaging import events

pytestmark = pytest.mark.functional

RABBIT = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")
SASL_USER, SASL_PASSWORD = "conductor", uuid.uuid4().hex


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return tls_servers.make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def secure_zk(tmp_path_factory, certs):
    server = tls_servers.SecureZooKeeper(tmp_path_factory.mktemp("zk"), certs,
                                         {SASL_USER: SASL_PASSWORD})
    server.start()
    yield server
    server.stop()


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def _shell(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NESTEDFLOW_")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "nestedflow.cmd.shell", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def _one_line(result):
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1, lines
    assert "Traceback" not in result.stderr
    return lines[0]


# -- ZooKeeper --------------------------------------------------------------


def _zk_url(secure_zk, root, ca, **extra):
    query = "&".join(f"{k}={v}" for k, v in {"sasl_mechanism": "DIGEST-MD5", "use_ssl": "true",
                                              "ca": ca, **extra}.items())
    return f"zookeeper://{SASL_USER}:{SASL_PASSWORD}@{secure_zk.secure_hosts}{root}?{query}"


def test_conductor_over_tls_with_sasl_runs_stacks(cluster, secure_zk, certs):
    cluster.jobboard_url = _zk_url(secure_zk, cluster.root, certs.ca_pem,
                                   certfile=certs.client_crt, keyfile=certs.client_key)
    client = zookeeper.make_client(zookeeper.JobboardURL(cluster.jobboard_url))
    client.start(timeout=20)
    cluster.zk = client
    anonymous = KazooClient(hosts=secure_zk.secure_hosts, use_ssl=True, ca=certs.ca_pem)
    anonymous.start(timeout=20)
    try:
        conductor = cluster.start("tls1")
        engine = cluster.engine()
        stack = engine.create_stack(f"tls-{uuid.uuid4().hex[:6]}", {
            "heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::TestResource"},
                          "b": {"type": "OS::Heat::TestResource", "depends_on": ["a"]}}})
        final = engine.wait(stack.id, timeout=90)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        wait_for(lambda: cluster.jobs() == [], 30, what="the job to be consumed")
        assert "tls1" in conductor.log()
        # SASL made the ACLs: the login named in the JAAS file, nobody else.
        acls, _ = client.get_acls(f"{cluster.root}/jobs")
        assert ("sasl", SASL_USER) in {(a.id.scheme, a.id.id) for a in acls}
        assert "world" not in {a.id.scheme for a in acls}
        with pytest.raises(k_exc.NoAuthError):
            anonymous.get_children(f"{cluster.root}/jobs")
    finally:
        anonymous.stop()
        anonymous.close()


def test_zookeeper_wrong_ca_fails_in_one_line(secure_zk, certs):
    root = f"/nftest-{uuid.uuid4().hex[:12]}"
    url = _zk_url(secure_zk, root, certs.wrong_ca_pem)
    line = _one_line(_shell("--jobboard-url", url, "conductor", "list"))
    assert line.startswith(f"ERROR: ZooKeeper link zookeeper://{secure_zk.secure_hosts}{root}: "
                           f"{secure_zk.secure_hosts}: TLS handshake failed: certificate "
                           "verify failed"), line
    assert SASL_PASSWORD not in line and "wrong-ca.pem" in line


# -- RabbitMQ ---------------------------------------------------------------


@pytest.fixture(scope="module")
def rabbit_tls(certs):
    target = RABBIT.rpartition("@")[2].split("/")[0]
    host, _, port = target.partition(":")
    proxy = tls_servers.TlsProxy((host, int(port or 5672)), certs.server_crt, certs.server_key)
    yield proxy
    proxy.close()


def _rabbit_url(proxy, ca):
    credentials = RABBIT.split("//", 1)[1].rpartition("@")[0]
    return (f"rabbit://{credentials}@127.0.0.1:{proxy.port}/"
            f"?ssl=true&ssl_ca_file={ca}")


def test_stack_events_over_rabbitmq_tls(rabbit_tls, certs):
    url = _rabbit_url(rabbit_tls, certs.ca_pem)
    listener = events.StackEvents(url, safety_interval=120)
    publisher = events.StackEvents(url)
    stack_id = str(uuid.uuid4())
    published = threading.Event()
    woken = []
    try:
        listener.start()
        waiter = threading.Thread(target=lambda: woken.append(
            listener.wait(stack_id, published.is_set, timeout=90)), daemon=True)
        waiter.start()
        # The listener's queue may not be bound yet: announce until heard.
        deadline = time.monotonic() + 90
        while waiter.is_alive() and time.monotonic() < deadline:
            published.set()
            publisher.changed(stack_id, "CREATE", "COMPLETE")
            waiter.join(1.0)
        assert woken == [True]
        # Woken by a notification that crossed the TLS proxy, not by the
        # safety poll (120 s).
        assert [sid for sid, _ in listener.latencies] == [stack_id]
        assert rabbit_tls.handshakes >= 2 and rabbit_tls.failed_handshakes == 0
    finally:
        publisher.close()
        listener.close()


def test_rabbitmq_wrong_ca_fails_in_one_line(rabbit_tls, certs):
    with pytest.raises(exceptions.LinkSecurityError) as raised:
        events.StackEvents(_rabbit_url(rabbit_tls, certs.wrong_ca_pem))
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"RabbitMQ link rabbit://127.0.0.1:{rabbit_tls.port}: TLS "
                              "handshake failed: certificate verify failed"), message
    assert "wrong-ca.pem" in message


# -- PostgreSQL -------------------------------------------------------------


@pytest.fixture(scope="module")
def ssl_pg(certs):
    server = tls_servers.SslPostgres(certs)
    server.start()
    yield server
    server.stop()


def _pg_url(server, ca, mode="verify-full"):
    return (f"postgresql+psycopg2://postgres@127.0.0.1:{server.port}/postgres"
            f"?sslmode={mode}&sslrootcert={ca}")


def test_postgresql_over_tls(ssl_pg, certs):
    url = _pg_url(ssl_pg, certs.ca_pem)
    result = _shell("--db-url", url, "stack", "list", "-f", "value")
    assert result.returncode == 0, result.stderr
    # Every session nestedflow opened went over TLS.
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT a.application_name, s.ssl FROM pg_stat_ssl s "
                "JOIN pg_stat_activity a USING (pid) WHERE a.pid = pg_backend_pid()")).all()
            tables = conn.execute(sa.text(
                "SELECT count(*) FROM information_schema.tables WHERE table_name = 'resources'"
            )).scalar()
    finally:
        engine.dispose()
    assert [ssl for _, ssl in rows] == [True]
    assert tables == 1  # the CLI migrated the database through the TLS link


def test_postgresql_wrong_ca_fails_in_one_line(ssl_pg, certs):
    line = _one_line(_shell("--db-url", _pg_url(ssl_pg, certs.wrong_ca_pem), "stack", "list"))
    assert line.startswith("ERROR: ") and "SSL error: certificate verify failed" in line, line
    assert f"port {ssl_pg.port}" in line
