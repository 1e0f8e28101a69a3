"""kill -9 of the conductor running a parent stack while its nested stack
is being updated (PostgreSQL, three conductors).

Found by tests/functional/test_partitions.py: a run taken over in the
middle of a nested stack's update replaced the whole nested stack (a new
child created, the old one deleted) instead of updating it in place. Heat
always issues the nested update (heat/engine/resources/stack_resource.py,
``StackResource._needs_update``): the child converges to the new template
whatever the interrupted update left, so the new owner resumes it in place.
"""

import json
import time
import uuid

import pytest
from conductor_cluster import wait_for
from test_conductor_crashes import assert_silent_since, event_seen, takeover, utcnow

pytestmark = pytest.mark.functional

INNER = {"heat_template_version": "2018-08-31",
         "parameters": {"value": {"type": "string"}},
         "resources": {"a": {"type": "OS::Heat::TestResource",
                             "properties": {"value": {"get_param": "value"},
                                            "action_wait_secs": {"update": 3}}}}}
PARENT = {"heat_template_version": "2018-08-31",
          "parameters": {"value": {"type": "string"}},
          "resources": {"inner": {"type": "inner.yaml",
                                  "properties": {"value": {"get_param": "value"}}}}}


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def test_nested_update_interrupted_by_a_crash_is_resumed_in_place(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack = engine.create_stack(f"nu-{uuid.uuid4().hex[:6]}", PARENT,
                                files={"inner.yaml": json.dumps(INNER)},
                                parameters={"value": "v1"})
    created = engine.wait(stack.id, timeout=60)
    assert created.status == "COMPLETE", created.status_reason
    child_id = next(r["physical_id"] for r in probe.resources(stack.id) if r["name"] == "inner")

    engine.update_stack(stack.id, None, parameters={"value": "v2"}, existing=True)
    wait_for(lambda: event_seen(probe, child_id, "a", "UPDATE", "IN_PROGRESS"), 60,
             what="the nested stack's update to start")
    victim = cluster.holder(stack.id)
    cluster.kill(victim)
    killed_at, killed = time.monotonic(), utcnow()
    takeover(cluster, probe, stack.id, victim, killed_at)
    final = engine.wait(stack.id, timeout=90)
    assert (final.action, final.status) == ("UPDATE", "COMPLETE"), final.status_reason

    rows = [r for r in probe.resources(stack.id) if r["name"] == "inner" and r["current"]]
    assert [r["physical_id"] for r in rows] == [child_id]  # not replaced
    assert len(probe.resources(stack.id)) == 1  # no replacement row either
    child = probe.stack(child_id)
    assert (child["action"], child["status"], child["deleted_at"]) == ("UPDATE", "COMPLETE", None)
    live = [o for o in probe.physical(child_id) if o["deleted_at"] is None]
    assert [o["properties"]["value"] for o in live] == ["v2"]
    assert_silent_since(probe, stack.id, victim, killed)
