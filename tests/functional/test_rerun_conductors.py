"""Re-runs, checks and stop/continue run by conductor processes (real
ZooKeeper, PostgreSQL, RabbitMQ): a re-run's plan reaches the conductor that
builds its flow through the database, not the job."""

import pytest

pytestmark = pytest.mark.functional

TEMPLATE = """
heat_template_version: 2016-10-14
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a, wait_secs: 0.2}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_resource: a}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_attr: [b, output]}}}
  d: {type: OS::Heat::TestResource, depends_on: [c]}
"""


def ids(engine, stack_id):
    return {r.name: r.physical_id for r in engine.list_resources(stack_id)}


def runners(engine, stack_id):
    traversal = engine.db.get_stack(stack_id).current_traversal
    return {(e.resource_name, e.engine_id) for e in engine.db.list_events(stack_id)
            if e.traversal_id == traversal and e.resource_name}


@pytest.mark.parametrize("shared_db_url", ["postgresql"], indirect=True)
def test_rerun_and_checks_through_conductors(cluster, server, stack_name):
    cluster.start_many(["c1", "c2"], job_slots=2)
    engine = cluster.engine()
    server.statuses["/d"] = [500]
    environment = {"checks": {"d": [{"type": "http", "url": server.url("/d"),
                                     "name": "d serves"}]}}
    stack = engine.create_stack(stack_name, TEMPLATE, environment=environment,
                                disable_rollback=True)
    stack = engine.wait(stack.id, timeout=120)
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.d: post-check 'd serves' of CREATE failed" in stack.status_reason
    before = ids(engine, stack.id)

    server.statuses["/d"] = [200]
    stack = engine.wait(engine.rerun(stack.id, ["d"]).id, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    after = ids(engine, stack.id)
    assert {k: after[k] for k in "abc"} == {k: before[k] for k in "abc"}
    assert after["d"] != before["d"]
    acted = runners(engine, stack.id)
    assert {name for name, _ in acted} == {"d"}
    assert {runner for _, runner in acted} <= {"c1", "c2"}

    stack = engine.wait(engine.rerun(stack.id, ["b"], with_dependents=True).id, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert {name for name, _ in runners(engine, stack.id)} == {"b", "c", "d"}
    assert ids(engine, stack.id) == after

    server.statuses["/d"] = [503]
    stack = engine.wait(engine.rerun(stack.id, ["d"], checks_only=True).id, timeout=120)
    assert stack.stack_status == "CHECK_FAILED"
    assert "check failed: d (post-check 'd serves'" in stack.status_reason
    assert ids(engine, stack.id) == after
    assert [(c.resource_name, c.status) for c in engine.list_checks(stack.id)] == [
        ("d", "FAIL"), ("d", "PASS"), ("d", "PASS"), ("d", "FAIL")]


@pytest.mark.parametrize("shared_db_url", ["postgresql"], indirect=True)
def test_stop_and_continue_through_conductors(cluster, probe, stack_name):
    from conductor_cluster import wait_for

    cluster.start_many(["c1", "c2"], job_slots=2)
    engine = cluster.engine()
    template = {"heat_template_version": "2016-10-14", "resources": {
        f"r{i:02d}": {"type": "OS::Heat::TestResource",
                      "properties": {"value": str(i), "wait_secs": 0.3}} for i in range(24)}}
    stack = engine.create_stack(stack_name, template)
    wait_for(lambda: len(engine.store.live(stack.id)) >= 4, 60, what="4 resources created")
    engine.stop_stack(stack.id)
    stopped = engine.wait(stack.id, timeout=120)
    assert stopped.stack_status == "CREATE_FAILED"
    made = len(engine.store.live(stack.id))
    assert 4 <= made < 24
    final = engine.wait(engine.continue_stack(stack.id).id, timeout=120)
    assert final.stack_status == "CREATE_COMPLETE", final.status_reason
    objects = probe.physical(stack.id)
    assert len(objects) == 24 and all(o["deleted_at"] is None for o in objects)
