"""Conductor daemons on a real ZooKeeper with PostgreSQL and MariaDB.

Stacks are posted from other processes (the ``nestedflow`` command, or an
Engine in this process) and run by three ``nestedflow-conductor``
processes; see test_conductor_crashes.py for what happens when they die.
"""

import collections
import datetime
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
import yaml
from conductor_cluster import ROOT, wait_for, zookeeper_client

from nestedflow.dispatch import impl_zookeeper as jobboard

pytestmark = pytest.mark.functional

CHILD = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "a", "wait_secs": 0.4}},
        "b": {"type": "OS::Heat::TestResource", "properties": {"value": "b", "wait_secs": 0.4}},
    },
}


def tree_template(members=3):
    """A stack whose group of ``members`` nested stacks are jobs of their own."""
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "first": {"type": "OS::Heat::TestResource",
                      "properties": {"value": "first", "wait_secs": 0.4}},
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "depends_on": ["first"],
                "properties": {"count": members, "resource_def": {
                    "type": "OS::Heat::Stack",
                    "properties": {"template": yaml.safe_dump(CHILD)}}},
            },
            "last": {"type": "OS::Heat::TestResource", "properties": {"value": "last"},
                     "depends_on": ["group"]},
        },
    }


def cli(cluster, *args):
    env = dict(os.environ, NESTEDFLOW_DB_URL=cluster.db_url,
               NESTEDFLOW_JOBBOARD_URL=cluster.jobboard_url)
    return subprocess.run([sys.executable, "-m", "nestedflow.cmd.shell", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def tree_ids(probe, engine, root_id):
    return [s.id for s in engine.list_stacks(show_nested=True)
            if s.id == root_id or probe.stack(s.id)["root_id"] == root_id]


def test_stacks_posted_elsewhere_complete_spread_over_conductors(cluster, probe, tmp_path):
    cluster.start_many(["c1", "c2", "c3"], job_slots=1)
    template = tmp_path / "tree.yaml"
    template.write_text(yaml.safe_dump(tree_template()))
    names = [f"tree-{uuid.uuid4().hex[:6]}" for _ in range(3)]
    started = time.monotonic()
    for name in names:
        # Another process posts the jobs and returns at once.
        result = cli(cluster, "stack", "create", name, "-t", str(template), "-f", "json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["stack_status"] == "CREATE_IN_PROGRESS"
    engine = cluster.engine()
    stacks = [engine.wait(engine.get_stack(name).id, timeout=180) for name in names]
    elapsed = time.monotonic() - started
    print(f"3 trees of 5 jobs each on 3 conductors: {elapsed:.1f}s")
    used = collections.Counter()
    for stack in stacks:
        assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
        ids = tree_ids(probe, engine, stack.id)
        assert len(ids) == 1 + 1 + 3  # root, group, three members
        runners = collections.Counter()
        for stack_id in ids:
            rows = [r for r in probe.resources(stack_id) if r["current"]]
            live = {o["id"]: o for o in probe.physical(stack_id) if o["deleted_at"] is None}
            stored = [r for r in rows if r["type"] == "OS::Heat::TestResource"]
            # Every resource's physical object exists exactly once; nothing else.
            assert sorted(r["physical_id"] for r in stored) == sorted(live)
            assert all(r["engine_id"] is None for r in rows)  # no lock left behind
            for event in probe.events(stack_id):
                if event["resource_name"] and event["status"] == "COMPLETE":
                    runners[event["engine_id"]] += 1
        # The resource actions of this one stack tree ran on several conductors.
        assert len(runners) >= 2, runners
        assert set(runners) <= {"c1", "c2", "c3"}
        used.update(runners)
    assert set(used) == {"c1", "c2", "c3"}, used
    # The jobs are gone once their stacks settled.
    wait_for(lambda: cluster.jobs() == [], 10, what="the jobboard to empty")

    listing = json.loads(cli(cluster, "conductor", "list", "-f", "json").stdout)
    assert sorted(c["name"] for c in listing) == ["c1", "c2", "c3"]

    # And deleted from yet another process, by whichever conductor.
    for stack in stacks:
        assert cli(cluster, "stack", "delete", stack.id).returncode == 0
    for stack in stacks:
        final = engine.wait(stack.id, timeout=180)
        assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
    for stack in stacks:
        for stack_id in tree_ids(probe, engine, stack.id) + [stack.id]:
            assert [o for o in probe.physical(stack_id) if o["deleted_at"] is None] == []


EVIL_MODULE = """
import os
open(os.environ["NESTEDFLOW_EVIL_MARKER"], "w").write("imported")

def build(**kwargs):
    open(os.environ["NESTEDFLOW_EVIL_MARKER"], "w").write("called")
"""


def test_job_naming_a_factory_outside_the_allow_list_is_refused(cluster, probe, tmp_path):
    # The module exists and is importable by the conductor: importing it
    # would leave a marker file behind.
    (tmp_path / "evil_flows.py").write_text(EVIL_MODULE)
    marker = tmp_path / "marker"
    os.environ["NESTEDFLOW_EVIL_MARKER"] = str(marker)
    os.environ["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    try:
        conductor = cluster.start("c1")
    finally:
        os.environ.pop("NESTEDFLOW_EVIL_MARKER")
        os.environ["PYTHONPATH"] = os.environ["PYTHONPATH"].split(os.pathsep, 1)[1]
    engine = cluster.engine()
    # A real stack to aim at: the job would run its traversal if accepted.
    victim = engine.create_stack(f"victim-{uuid.uuid4().hex[:6]}", {
        "heat_template_version": "2018-08-31",
        "resources": {"x": {"type": "OS::Heat::TestResource"}}})
    victim = engine.wait(victim.id, timeout=60)
    events_before = len(probe.events(victim.id))
    kwargs = {"stack_id": victim.id, "traversal_id": probe.stack(victim.id)["current_traversal"],
              "action": "DELETE"}
    cluster.post_raw({"factory": "evil_flows.build", "kwargs": kwargs}, "evil factory")
    cluster.post_raw({"factory": "os.system", "kwargs": {"command": "touch " + str(marker)}},
             "os.system")
    cluster.post_raw({"factory": "nestedflow.flows.factories.stack_traversal",
                       "kwargs": {**kwargs, "evil": "1"}}, "extra argument")

    trash = wait_for(lambda: len(cluster.trash()) == 3 and cluster.trash(), 30,
                     what="three refused jobs in the trash")
    reasons = sorted(job["details"]["refused"] for job in trash.values())
    assert "flow factory 'evil_flows.build' is not in nestedflow's allow-list" in reasons
    assert "flow factory 'os.system' is not in nestedflow's allow-list" in reasons
    assert any("are not stack_id, traversal_id, action strings" in r for r in reasons)
    # The victim's own create job leaves the board once its claim is consumed.
    wait_for(lambda: cluster.jobs() == [], 30, what="the jobboard to empty")
    assert not marker.exists(), "the refused factory's module was imported"
    log = conductor.log()
    assert "job" in log and "refused and removed from the jobboard" in log
    assert "evil_flows.build" in log
    # Nothing of it ran: the stack it named is untouched...
    assert (probe.stack(victim.id)["action"], probe.stack(victim.id)["status"]) == (
        "CREATE", "COMPLETE")
    assert len(probe.events(victim.id)) == events_before
    # ...and the conductor goes on serving legitimate jobs.
    final = engine.wait(engine.delete_stack(victim.id).id, timeout=60)
    assert (final.action, final.status) == ("DELETE", "COMPLETE")


def test_job_whose_stack_vanished_is_dropped_not_cycled(cluster, tmp_path):
    conductors = cluster.start_many(["c1", "c2"])
    engine = cluster.engine()
    stack_id = str(uuid.uuid4())
    # A job for a stack row that no longer exists.
    engine._dispatcher.dispatch(stack_id, str(uuid.uuid4()), "CREATE")
    wait_for(lambda: cluster.jobs() == [], 30, what="the job to be dropped")
    logs = "".join(c.log() for c in conductors)
    assert logs.count(f"stack {stack_id} no longer exists") == 1
    assert "(attempt 2)" not in logs


def test_sigterm_hands_running_jobs_back_at_a_safe_point(cluster, probe):
    cluster.start_many(["c1", "c2"])
    engine = cluster.engine()
    template = {"heat_template_version": "2018-08-31", "resources": {
        f"r{i}": {"type": "OS::Heat::TestResource",
                  "properties": {"value": str(i), "wait_secs": 1.5},
                  **({"depends_on": [f"r{i - 1}"]} if i else {})} for i in range(4)}}
    stack = engine.create_stack(f"term-{uuid.uuid4().hex[:6]}", template)
    wait_for(lambda: any(e["status"] == "COMPLETE" and e["resource_name"] == "r0"
                         for e in probe.events(stack.id)), 30, what="r0 to be created")
    holder = cluster.holder(stack.id)
    other = next(c for c in cluster.conductors.values() if c is not holder)
    listing = json.loads(cli(cluster, "conductor", "list", "-f", "json").stdout)
    held = {c["name"]: [j["stack_id"] for j in c["jobs"]] for c in listing}
    assert held == {holder.name: [stack.id], other.name: []}
    signalled, signalled_at = time.monotonic(), utcnow()
    holder.signal(signal.SIGTERM)
    assert holder.process.wait(30) == 0
    exited = time.monotonic() - signalled
    final = engine.wait(stack.id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    resumed = min(e["timestamp"] for e in probe.events(stack.id)
                  if e["engine_id"] == other.name and e["timestamp"] >= signalled_at)
    handover = (resumed - signalled_at).total_seconds()
    print(f"SIGTERM: holder exited after {exited:.1f}s, job resumed after {handover:.1f}s")
    # Handed back at once, not left to lapse with the session.
    assert handover < exited + 2.0
    assert "suspended stack" in holder.log()
    events = probe.events(stack.id)
    # The action in flight finished on the stopping conductor; nothing ran twice.
    for name in template["resources"]:
        starts = [e for e in events if e["resource_name"] == name
                  and e["status"] == "IN_PROGRESS"]
        assert len(starts) == 1, (name, starts)
    assert {e["engine_id"] for e in events if e["resource_name"]} == {holder.name, other.name}
    live = [o for o in probe.physical(stack.id) if o["deleted_at"] is None]
    assert len(live) == 4


def test_cancel_reaches_the_conductor_running_the_stack(cluster, probe):
    cluster.start_many(["c1", "c2"])
    engine = cluster.engine()
    template = {"heat_template_version": "2018-08-31", "resources": {
        "quick": {"type": "OS::Heat::TestResource", "properties": {"value": "q"}},
        "slow": {"type": "OS::Heat::TestResource",
                 "properties": {"value": "s", "action_wait_secs": {"create": 30}},
                 "depends_on": ["quick"]}}}
    stack = engine.create_stack(f"cancel-{uuid.uuid4().hex[:6]}", template)
    wait_for(lambda: any(e["resource_name"] == "slow" and e["status"] == "IN_PROGRESS"
                         for e in probe.events(stack.id)), 30, what="slow to start")
    cancelled = time.monotonic()
    engine.cancel_update(stack.id)
    final = engine.wait(stack.id, timeout=60)
    took = time.monotonic() - cancelled
    print(f"cancel with rollback settled after {took:.1f}s")
    assert (final.action, final.status) == ("ROLLBACK", "COMPLETE"), final.status_reason
    # The 30-second wait in the conductor was cut short.
    assert took < 15
    assert [o for o in probe.physical(stack.id) if o["deleted_at"] is None] == []


@pytest.mark.parametrize("shared_db_url", ["postgresql"], indirect=True)
def test_second_conductor_with_a_live_name_refuses_to_start(cluster):
    first = cluster.start("c1")
    second = cluster.start("c1", wait=False)
    assert second.process.wait(30) == 1
    assert "a conductor named c1 is already running" in cluster.output(second)
    assert first.alive()


def test_board_lists_unclaimed_jobs_from_one_listing():
    client = zookeeper_client()
    url = jobboard.JobboardURL(f"zookeeper://127.0.0.1:2181/nestedflow-test-{uuid.uuid4().hex[:8]}")
    board = jobboard.Board("lister", url, client)
    other = jobboard.Board("other", url, client)
    try:
        board.connect()
        other.connect()
        posted = [board.post(f"job {i}", details={"i": i}) for i in range(4)]
        wait_for(lambda: len(list(board.unclaimed_jobs(ensure_fresh=True))) == 4, 10,
                 what="the board to see its posts")
        # The other board learns of them through its own watch: under load later.
        wait_for(lambda: len(list(other.unclaimed_jobs(ensure_fresh=True))) == 4, 10,
                 what="the other board to see the posts")
        other.claim(posted[1], "someone")
        board.claim(posted[2], "me")
        board.consume(posted[2], "me")
        unclaimed = [job.details["i"] for job in board.unclaimed_jobs(ensure_fresh=True)]
        assert unclaimed == [0, 3]  # oldest first; claimed and consumed ones left out
        # A claim given back (or lost with its conductor's session) frees the job.
        other.abandon(posted[1], "someone")
        assert [job.details["i"] for job in board.unclaimed_jobs()] == [0, 1, 3]
    finally:
        board.close()
        other.close()
        client.delete(url.path(), recursive=True)
        client.stop()
