"""A stack stored but never posted: the jobboard outbox (PostgreSQL, real
ZooKeeper, real conductor processes).

An engine with a jobboard stores each traversal marked
``<engine id>@unposted`` in the transaction that stores it. Here the
poster is a process that dies -- ``os._exit``, no clean-up, as kill -9 --
right before it would post the job, or right after. Once its heartbeat is
stale, a live engine takes the mark over and posts the job, unless the
board already holds it: the stack completes, its job is posted once, and
each resource is created once.
"""

import json
import os
import subprocess
import sys
import uuid

import pytest
from conductor_cluster import TRANSPORT_URL, wait_for
from test_conductor_crashes import assert_exactly_once, starts

import nestedflow
from nestedflow.conf import CONF

pytestmark = pytest.mark.functional

INTERVAL = 0.3
#: The poster's own: it counts as dead 6 s after its last beat, long after
#: this process's engine made its start-up recovery pass (a test below
#: checks that the pass leaves a live poster's stack alone).
POSTER_INTERVAL = 2.0

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {
    "r0": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
    "r1": {"type": "OS::Heat::TestResource", "depends_on": ["r0"],
           "properties": {"value": "b"}},
}}

#: The poster: stores the stack, then dies before (or after) posting its job.
POSTER = """
import json, os, sys
from nestedflow.conf import CONF
CONF.set_override("heartbeat_interval", float(sys.argv[4]), group="engine")
import nestedflow
from nestedflow.dispatch import impl_zookeeper as jobboard

post = jobboard.JobboardDispatcher.dispatch

def dispatch(self, stack_id, traversal_id, action):
    if sys.argv[5] == "after":
        post(self, stack_id, traversal_id, action)
    print(stack_id, flush=True)
    os._exit(9)

jobboard.JobboardDispatcher.dispatch = dispatch
engine = nestedflow.Engine(db_url=sys.argv[1], jobboard_url=sys.argv[2],
                           transport_url=sys.argv[6])
engine.create_stack(sys.argv[3], json.loads(sys.argv[7]))
"""


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


@pytest.fixture
def short_heartbeat(tmp_path):
    """The conductors beat (and look for unposted stacks) every INTERVAL s;
    this process's engines only when a test calls recover_orphans() (their
    beat, a minute apart, would race the test's own call)."""
    CONF.set_override("heartbeat_interval", 60.0, group="engine")
    config = tmp_path / "heartbeat.conf"
    config.write_text(f"[engine]\nheartbeat_interval = {INTERVAL}\n")
    yield ["--config-file", str(config)]
    CONF.clear_override("heartbeat_interval", group="engine")


def _poster_dies(cluster, stack_name, when):
    env = dict(os.environ)
    env.pop("NESTEDFLOW_DB_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", POSTER, cluster.db_url, cluster.jobboard_url, stack_name,
         str(POSTER_INTERVAL), when, TRANSPORT_URL, json.dumps(TEMPLATE)],
        capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 9, done.stderr
    return done.stdout.strip()


def _assert_created_once(probe, stack_id):
    assert [len(starts(probe, stack_id, name)) for name in ("r0", "r1")] == [1, 1]
    assert_exactly_once(probe, stack_id, 2)


def _owner(probe, stack_id):
    return probe.stack(stack_id)["traversal_owner"]


def _engine_with_heartbeat(cluster):
    engine = cluster.engine()
    engine.runtime  # noqa: B018 - builds the dispatcher: the engine beats from now on
    return engine


def _wait_dead(engine, owner):
    engine_id = owner.rpartition("@")[0]
    wait_for(lambda: not engine.db.engine_alive(engine_id), 3 * POSTER_INTERVAL + 10,
             what=f"engine {engine_id}'s heartbeat to go stale")


def test_a_stack_stored_but_never_posted_is_posted_by_a_live_engine(
        cluster, probe, stack_name, short_heartbeat):
    stack_id = _poster_dies(cluster, stack_name, "before")
    owner = _owner(probe, stack_id)
    assert owner.endswith("@unposted"), owner
    assert probe.stack(stack_id)["status"] == "IN_PROGRESS"
    assert cluster.jobs() == []  # nothing was posted

    engine = _engine_with_heartbeat(cluster)
    # While the poster's heartbeat is fresh it may still post: left alone.
    assert engine.db.engine_alive(owner.rpartition("@")[0])
    assert engine.recover_orphans() == []
    assert cluster.jobs() == []
    _wait_dead(engine, owner)
    assert engine.recover_orphans() == [stack_id]
    assert len(cluster.jobs()) == 1
    assert engine.recover_orphans() == []  # taken over: posted once
    assert len(cluster.jobs()) == 1

    cluster.start("c1", extra=short_heartbeat)
    final = engine.wait(stack_id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    _assert_created_once(probe, stack_id)


def test_a_job_posted_before_the_poster_died_is_not_posted_again(
        cluster, probe, stack_name, short_heartbeat):
    stack_id = _poster_dies(cluster, stack_name, "after")
    owner = _owner(probe, stack_id)
    assert owner.endswith("@unposted"), owner
    assert len(cluster.jobs()) == 1

    engine = _engine_with_heartbeat(cluster)
    _wait_dead(engine, owner)
    assert engine.recover_orphans() == []  # the board holds its job
    assert len(cluster.jobs()) == 1

    cluster.start("c1", extra=short_heartbeat)
    final = engine.wait(stack_id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    _assert_created_once(probe, stack_id)
    assert "posting it again" not in cluster.output(cluster.conductors["c1"])


def test_conductors_post_it_by_themselves(cluster, probe, stack_name, short_heartbeat):
    """No engine asked: the conductors' own heartbeats find the stack."""
    cluster.start_many(["c1", "c2"], extra=short_heartbeat)
    stack_id = _poster_dies(cluster, stack_name, "before")
    # Read through the probe: an engine here would beat and might post it.
    final = wait_for(lambda: (row := probe.stack(stack_id))["status"] != "IN_PROGRESS" and row,
                     60, interval=0.2, what="the stack to settle")
    assert (final["action"], final["status"]) == ("CREATE", "COMPLETE"), final["status_reason"]
    _assert_created_once(probe, stack_id)
    logs = "".join(cluster.output(c) for c in cluster.conductors.values())
    assert logs.count("posting it again") == 1, logs[-4000:]


def test_an_engine_that_posted_leaves_no_mark_for_others(cluster, probe, stack_name,
                                                         short_heartbeat):
    """A clean engine's stacks are never posted twice: a conductor's claim
    replaces the mark."""
    cluster.start("c1", extra=short_heartbeat)
    engine = cluster.engine()
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    assert not (_owner(probe, stack.id) or "").endswith("@unposted")


def test_a_nested_stack_whose_job_cannot_be_posted_is_left_to_the_outbox(
        cluster, probe, stack_name, short_heartbeat):
    """A run posts its nested stacks' jobs itself. Its conductor cut off
    from ZooKeeper (tests/functional/test_partitions.py) cannot, and by
    then may have lost its parent's claim to a run elsewhere that waits on
    the child it made: the child used to be failed by the cut-off run (a
    write after its claim lapsed, which failed the new run too). It stays
    IN_PROGRESS, handed to the outbox, and a live engine posts it."""
    from nestedflow.stacks.children import ParentLink

    engine = _engine_with_heartbeat(cluster)
    parent = engine.create_stack(stack_name, TEMPLATE)
    cut_off = nestedflow.Engine(db_url=cluster.db_url,
                                jobboard_url=f"zookeeper://127.0.0.1:1{cluster.root}")
    try:
        child = cut_off.stacks.create(
            f"{stack_name}-child", TEMPLATE, stack_id=str(uuid.uuid4()),
            parent=ParentLink(stack_id=parent.id, root_id=parent.id, resource_name="child",
                              depth=0))
    finally:
        cut_off.close()
    row = probe.stack(child.id)
    assert (row["action"], row["status"]) == ("CREATE", "IN_PROGRESS"), row["status_reason"]
    assert row["traversal_owner"].endswith(".lost@unposted"), row["traversal_owner"]
    assert [e for e in probe.events(child.id) if e["status"] == "FAILED"] == []

    cluster.start("c1", extra=short_heartbeat)  # beats: posts what the outbox holds
    for stack_id in (child.id, parent.id):
        final = engine.wait(stack_id, timeout=60)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        _assert_created_once(probe, stack_id)
