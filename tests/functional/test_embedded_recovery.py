"""An embedded engine killed in the middle of a create (SIGTERM, kill -9).

Its runs died with it; its heartbeat row stops. The next engine that runs
stacks resumes the create from the journal (what finished is not done
again), and a delete of the stack -- even one asked for at once, before
the dead engine's heartbeat went stale -- completes.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from nestedflow.conf import CONF

pytestmark = pytest.mark.functional

INTERVAL = 0.3

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {
    "r0": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
    "r1": {"type": "OS::Heat::TestResource", "depends_on": ["r0"],
           "properties": {"value": "b", "wait_secs": 2}},
    "r2": {"type": "OS::Heat::TestResource", "depends_on": ["r1"],
           "properties": {"value": "c"}},
}}

#: The process that gets killed: creates the stack, prints its id, waits.
VICTIM = """
import json, sys, time
from nestedflow.conf import CONF
CONF.set_override("heartbeat_interval", float(sys.argv[3]), group="engine")
import nestedflow
engine = nestedflow.Engine(db_url=sys.argv[1])
print(engine.create_stack(sys.argv[2], json.loads(sys.argv[4])).id, flush=True)
time.sleep(600)
"""


@pytest.fixture
def short_heartbeat():
    CONF.set_override("heartbeat_interval", INTERVAL, group="engine")
    yield
    CONF.clear_override("heartbeat_interval", group="engine")


def _killed_mid_create(db_url, stack_name, signum, probe):
    env = dict(os.environ)
    env.pop("NESTEDFLOW_DB_URL", None)
    victim = subprocess.Popen(
        [sys.executable, "-c", VICTIM, db_url, stack_name, str(INTERVAL),
         json.dumps(TEMPLATE)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        stack_id = victim.stdout.readline().strip()
        assert stack_id, "the victim did not create its stack"
        deadline = time.monotonic() + 60
        while not [e for e in probe.list_events(stack_id)
                   if (e.resource_name, e.action, e.status) == ("r1", "CREATE", "IN_PROGRESS")]:
            assert time.monotonic() < deadline, "r1 never started"
            time.sleep(0.05)
    finally:
        victim.send_signal(signum)
        victim.wait(30)
        victim.stdout.close()
    assert probe.get_stack(stack_id).status == "IN_PROGRESS"
    return stack_id


def _starts(engine, stack_id, name, action="CREATE"):
    return [e for e in engine.db.list_events(stack_id)
            if (e.resource_name, e.action, e.status) == (name, action, "IN_PROGRESS")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_next_engine_resumes_the_create(make_engine, db_url, stack_name, short_heartbeat,
                                         signum):
    probe = make_engine(db_url)
    stack_id = _killed_mid_create(db_url, stack_name, signum, probe.db)

    # The next engine to run stacks finds it when it starts, or at one of
    # its heartbeats once the dead engine's heartbeat is stale.
    engine = make_engine(db_url)
    engine.recover_orphans()
    final = engine.wait(stack_id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    # Finished before the kill: not done again. Interrupted: done again.
    assert len(_starts(engine, stack_id, "r0")) == 1
    assert len(_starts(engine, stack_id, "r1")) == 2
    assert len(_starts(engine, stack_id, "r2")) == 1
    live = engine.store.live(stack_id)
    assert sorted(o.resource_name for o in live) == ["r0", "r1", "r2"]

    final = engine.wait(engine.delete_stack(stack_id).id, timeout=60)
    assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
    assert engine.store.live(stack_id) == []


def test_delete_right_after_the_kill_completes(make_engine, db_url, stack_name,
                                               short_heartbeat):
    probe = make_engine(db_url)
    stack_id = _killed_mid_create(db_url, stack_name, signal.SIGKILL, probe.db)
    # The next command: a delete, before the dead engine's heartbeat is stale.
    engine = make_engine(db_url)
    final = engine.wait(engine.delete_stack(stack_id).id, timeout=60)
    assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
    assert engine.store.live(stack_id) == []
    assert engine.db.orphaned_stacks() == []
