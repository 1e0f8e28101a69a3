"""ZooKeeper credentials and ACLs on the shared test server (issue 32).

With ``zookeeper://USER:PASSWORD@HOST/ROOT`` every node nestedflow and
TaskFlow create under the root carries kazoo's CREATOR_ALL_ACL (digest
authentication needs no server configuration): a client without the
credentials can neither read a job's payload, nor delete a claim, nor post
a job; conductors with them run stacks as before. A root left open by an
older version is reported by ``nestedflow conductor list`` with its fix.
"""

import json
import os
import subprocess
import sys
import uuid

import pytest
from conductor_cluster import ROOT, ZK_HOSTS, wait_for, zookeeper_client
from kazoo import exceptions as k_exc
from kazoo import security as k_security
from kazoo.client import KazooClient

pytestmark = pytest.mark.functional


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def _credentials():
    return "nestedflow", uuid.uuid4().hex


def _authed_client(user, password):
    client = KazooClient(hosts=ZK_HOSTS, timeout=10.0,
                         auth_data=[("digest", f"{user}:{password}")])
    client.start(timeout=10)
    return client


def _walk(client, path):
    yield path
    for child in client.get_children(path):
        yield from _walk(client, f"{path}/{child}")


def _conductor_list(url):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NESTEDFLOW_")}
    return subprocess.run([sys.executable, "-m", "nestedflow.cmd.shell", "--jobboard-url", url,
                           "conductor", "list", "-f", "json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_acls_keep_clients_without_credentials_out(cluster, probe):
    user, password = _credentials()
    cluster.jobboard_url = f"zookeeper://{user}:{password}@{ZK_HOSTS}{cluster.root}"
    cluster.zk = _authed_client(user, password)
    anonymous = zookeeper_client()
    try:
        conductor = cluster.start("c1")
        engine = cluster.engine()
        template = {"heat_template_version": "2018-08-31", "resources": {
            f"r{i}": {"type": "OS::Heat::TestResource",
                      "properties": {"value": str(i), "wait_secs": 1.0},
                      **({"depends_on": [f"r{i - 1}"]} if i else {})} for i in range(3)}}
        stack = engine.create_stack(f"acl-{uuid.uuid4().hex[:6]}", template)
        cluster.holder(stack.id)
        jobs = f"{cluster.root}/jobs"
        job = next(c for c in cluster.zk.get_children(jobs) if not c.endswith(".lock"))
        claim = f"{jobs}/{job}.lock"
        assert cluster.zk.exists(claim)

        # Without the credentials: no payload, no listing, no claim deleted,
        # no job posted -- by kazoo directly or through TaskFlow's board.
        with pytest.raises(k_exc.NoAuthError):
            anonymous.get(f"{jobs}/{job}")
        with pytest.raises(k_exc.NoAuthError):
            anonymous.get_children(jobs)
        with pytest.raises(k_exc.NoAuthError):
            anonymous.delete(claim)
        with pytest.raises(k_exc.NoAuthError):
            anonymous.create(f"{jobs}/job9999999999", b"{}")
        with pytest.raises(Exception, match="NoAuth|not authenticated|Not authenticated"):
            cluster.post_raw({"factory": "os.system", "kwargs": {}}, client=anonymous)
        assert cluster.zk.exists(claim)

        # Every node under the root belongs to the credentials alone.
        for path in _walk(cluster.zk, cluster.root):
            acls, _ = cluster.zk.get_acls(path)
            assert [(a.id.scheme, a.id.id.split(":")[0], a.perms) for a in acls] == [
                ("digest", user, k_security.Permissions.ALL)], path

        # The conductor runs the stack as before.
        final = engine.wait(stack.id, timeout=90)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        wait_for(lambda: cluster.jobs() == [], 30, what="the job to be consumed")
        assert conductor.alive()
        listed = _conductor_list(cluster.jobboard_url)
        assert listed.returncode == 0, listed.stderr
        assert [c["name"] for c in json.loads(listed.stdout)] == ["c1"]
        assert "WARNING" not in listed.stderr and password not in listed.stderr
    finally:
        anonymous.stop()
        anonymous.close()


def test_root_created_without_acls_is_reported_with_its_fix(zk):
    user, password = _credentials()
    root = f"/nftest-{uuid.uuid4().hex[:12]}"
    # An older version (or a URL without credentials) made the board open.
    zk.ensure_path(f"{root}/jobs")
    authed = _authed_client(user, password)
    try:
        open_board = _conductor_list(f"zookeeper://{ZK_HOSTS}{root}")
        assert open_board.returncode == 0, open_board.stderr
        assert f"WARNING: the jobboard root {root} is open to anyone" in open_board.stderr

        secured_url = f"zookeeper://{user}:{password}@{ZK_HOSTS}{root}"
        result = _conductor_list(secured_url)
        assert result.returncode == 0, result.stderr
        warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
        assert len(warnings) == 1, result.stderr
        assert f"the jobboard root {root} was created without ACLs" in warnings[0]
        assert f"setAcl -R {root} auth::cdrwa" in warnings[0]
        assert password not in result.stderr

        # The fix it names (zkCli.sh's addauth, then setAcl -R ... auth::cdrwa),
        # made with kazoo: the report goes, and the board is closed.
        for path in _walk(authed, root):
            authed.set_acls(path, k_security.CREATOR_ALL_ACL)
        result = _conductor_list(secured_url)
        assert result.returncode == 0 and "WARNING" not in result.stderr, result.stderr
        with pytest.raises(k_exc.NoAuthError):
            zk.get_children(f"{root}/jobs")
    finally:
        authed.delete(root, recursive=True)
        authed.stop()
        authed.close()
