"""Signals reach actions run by conductors (ZooKeeper jobboard, RabbitMQ,
PostgreSQL): a wait condition's wait, run by a conductor process, is woken
by signals sent through another process's engine (the announcement crosses
oslo.messaging); a conductor killed while the wait is in flight leaves it
to another, which still sees the signals sent before
(heat/engine/resources/openstack/heat/wait_condition.py semantics)."""

import json
import time

import pytest
from test_wait_conditions import template

pytestmark = pytest.mark.functional


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def _state(engine, stack_id, name):
    row = next(r for r in engine.list_resources(stack_id) if r.name == name)
    return f"{row.action}_{row.status}"


def _until(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_wait_condition_on_conductors_survives_a_kill(cluster, stack_name):
    first = cluster.start("wc-a")
    engine = cluster.engine()
    stack = engine.create_stack(stack_name, template(count=2, timeout=600))
    _until(lambda: _state(engine, stack.id, "wait") == "CREATE_IN_PROGRESS")
    engine.signal_resource(stack.id, "handle", {"data": "one", "id": "1"})
    # The conductor holding the wait dies; another resumes the stack.
    cluster.kill(first)
    cluster.start("wc-b")
    time.sleep(1)
    engine.signal_resource(stack.id, "handle", {"data": "two", "id": "2"})
    done = engine.wait(stack.id, timeout=300)
    assert (done.action, done.status) == ("CREATE", "COMPLETE"), done.status_reason
    assert json.loads(done.outputs["data"]) == {"1": "one", "2": "two"}
    ran = {e.resource_name: e for e in engine.list_events(stack.id)
           if e.status == "COMPLETE" and e.action == "CREATE" and e.resource_name == "wait"}
    assert ran["wait"]


def test_failure_and_timeout_on_conductors(cluster, stack_name):
    cluster.start("wc-c")
    engine = cluster.engine()
    failing = engine.create_stack(f"{stack_name}-f", template(count=1, timeout=600),
                                  disable_rollback=True)
    timing = engine.create_stack(f"{stack_name}-t", template(count=1, timeout=3))
    _until(lambda: _state(engine, failing.id, "wait") == "CREATE_IN_PROGRESS")
    engine.signal_resource(failing.id, "handle", {"status": "FAILURE", "reason": "broken"})
    done = engine.wait(failing.id, timeout=120)
    assert (done.action, done.status) == ("CREATE", "FAILED")
    assert done.status_reason == "resources.wait: broken"
    wait = next(r for r in engine.list_resources(failing.id) if r.name == "wait")
    assert wait.status_reason == "WaitConditionFailure: broken"
    done = engine.wait(timing.id, timeout=120)
    # Rollback enabled: the create failed on Heat's timeout and was rolled back.
    assert (done.action, done.status) == ("ROLLBACK", "COMPLETE")
    reasons = [e.status_reason for e in engine.list_events(timing.id)
               if e.resource_name == "wait"]
    assert "WaitConditionTimeout: 0 of 1 received" in reasons
