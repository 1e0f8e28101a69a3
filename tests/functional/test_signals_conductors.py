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


def _group_template(wait_secs):
    member = {"type": "OS::Heat::TestResource",
              "properties": {"value": "m", "action_wait_secs": {"create": wait_secs}}}
    return {"heat_template_version": "2015-04-30", "resources": {
        "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 6, "desired_capacity": 2, "resource": member}},
        "to_five": {"type": "OS::Heat::ScalingPolicy", "properties": {
            "auto_scaling_group_id": {"get_resource": "group"}, "scaling_adjustment": 5,
            "adjustment_type": "exact_capacity"}},
        "down": {"type": "OS::Heat::ScalingPolicy", "properties": {
            "auto_scaling_group_id": {"get_resource": "group"}, "scaling_adjustment": -1,
            "adjustment_type": "change_in_capacity"}}}}


def test_scaling_group_on_conductors_killed_mid_scale(cluster, probe, stack_name):
    """A policy's signal scales the group on conductors; the conductor
    running the scale-up is killed while members are being created; another
    finishes it with every member created once and none leaked
    (assert_exactly_once of test_conductor_crashes)."""
    from test_conductor_crashes import assert_exactly_once

    cluster.start_many(["asg-a", "asg-b"])
    engine = cluster.engine()
    stack = engine.create_stack(stack_name, _group_template(wait_secs=3))
    done = engine.wait(stack.id, timeout=300)
    assert done.status == "COMPLETE", done.status_reason
    group = next(r for r in engine.list_resources(stack.id) if r.name == "group")
    child_id = group.physical_id
    engine.signal_resource(stack.id, "to_five")
    _until(lambda: len([r for r in probe.resources(child_id)
                        if r["action"] == "CREATE" and r["status"] == "IN_PROGRESS"]) >= 1)
    cluster.kill(cluster.holder(child_id))
    child = engine.wait(child_id, timeout=300)
    assert (child.action, child.status) == ("UPDATE", "COMPLETE"), child.status_reason
    assert_exactly_once(probe, child_id, 5)
    # The survivor scales it down: the oldest member goes.
    oldest = min((r for r in probe.resources(child_id) if r["current"]), key=lambda r: r["id"])
    engine.signal_resource(stack.id, "down")
    _until(lambda: probe.stack(child_id)["status"] == "IN_PROGRESS"
           or len([r for r in probe.resources(child_id) if r["current"]]) == 4, timeout=60)
    child = engine.wait(child_id, timeout=300)
    assert child.status == "COMPLETE", child.status_reason
    assert_exactly_once(probe, child_id, 4)
    assert oldest["name"] not in {r["name"] for r in probe.resources(child_id) if r["current"]}
