"""kill -9 of the conductor running an update while it creates the
resources the update adds -- a plain one, and the template members a
ResourceGroup scales up to -- then another conductor takes the update over
(PostgreSQL, two conductors).

The new owner replaces each resource whose create was cut short, as Heat
replaces a resource whose action did not finish. Found with the scaling
group's takeover (test_signals_conductors.py): a replacement kept the
create key of the row it replaced, so it made (or adopted) its object under
that key, and the cleanup of the original deleted it by the same key -- the
update ended UPDATE_COMPLETE with the new resources' objects deleted (for a
template member: its nested stack deleted under a current row).
"""

import uuid

import pytest
import yaml
from conductor_cluster import wait_for
from test_conductor_crashes import assert_exactly_once, assert_silent_since, event_seen, utcnow

pytestmark = pytest.mark.functional

TR = "OS::Heat::TestResource"
SLOW_CREATE = {"create": 3}


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


def _kill_in_create(cluster, probe, stack_id, name):
    """Kill the conductor once it started creating ``name`` in ``stack_id``;
    returns (the conductor killed, when)."""
    started = wait_for(lambda: event_seen(probe, stack_id, name, "CREATE", "IN_PROGRESS"),
                       120, what=f"{name}'s create to start")
    victim = cluster.conductors[started["engine_id"]]
    cluster.kill(victim)
    return victim, utcnow()


def test_kill_in_the_create_of_a_resource_an_update_adds(cluster, probe):
    cluster.start_many(["ua-a", "ua-b"])
    engine = cluster.engine()
    template = {"heat_template_version": "2018-08-31",
                "resources": {"r0": {"type": TR, "properties": {"value": "a"}}}}
    stack = engine.create_stack(f"ua-{uuid.uuid4().hex[:6]}", template)
    assert engine.wait(stack.id, timeout=60).status == "COMPLETE"
    template["resources"]["r1"] = {"type": TR, "properties": {
        "value": "b", "action_wait_secs": SLOW_CREATE}}
    engine.update_stack(stack.id, template)
    victim, killed = _kill_in_create(cluster, probe, stack.id, "r1")

    final = engine.wait(stack.id, timeout=120)
    assert (final.action, final.status) == ("UPDATE", "COMPLETE"), final.status_reason
    assert_exactly_once(probe, stack.id, 2)
    r1 = [r for r in probe.resources(stack.id) if r["name"] == "r1"]
    # The row the kill cut short was replaced; its own key found nothing of
    # the replacement's.
    assert [r["current"] for r in r1] == [False, True] and r1[1]["replaces"] == r1[0]["id"]
    assert_silent_since(probe, stack.id, victim, killed)


def test_kill_while_a_resource_group_scales_up_its_template_members(cluster, probe):
    cluster.start_many(["rg-a", "rg-b"])
    engine = cluster.engine()
    member = yaml.safe_dump({"heat_template_version": "2018-08-31", "resources": {
        "obj": {"type": TR, "properties": {"value": "m", "action_wait_secs": SLOW_CREATE}}}})
    template = {"heat_template_version": "2018-08-31",
                "parameters": {"count": {"type": "number", "default": 2}},
                "resources": {"group": {"type": "OS::Heat::ResourceGroup", "properties": {
                    "count": {"get_param": "count"},
                    "resource_def": {"type": "member.yaml"}}}}}
    stack = engine.create_stack(f"rg-{uuid.uuid4().hex[:6]}", template,
                                files={"member.yaml": member})
    done = engine.wait(stack.id, timeout=120)
    assert done.status == "COMPLETE", done.status_reason
    group_id = next(r["physical_id"] for r in probe.resources(stack.id) if r["name"] == "group")

    engine.update_stack(stack.id, None, parameters={"count": 4}, existing=True)
    # Killed once member 2's nested stack exists: its create was under way.
    cut_short = wait_for(lambda: next((c for c in engine.db.list_children(group_id)
                                       if c.owner_resource == "2"), None),
                         120, what="member 2's nested stack")
    victim, killed = _kill_in_create(cluster, probe, group_id, "2")
    original = next(r for r in probe.resources(group_id) if r["name"] == "2")

    final = engine.wait(stack.id, timeout=300)
    assert (final.action, final.status) == ("UPDATE", "COMPLETE"), final.status_reason
    members = {r["name"]: r for r in probe.resources(group_id) if r["current"]}
    assert sorted(members) == ["0", "1", "2", "3"]
    assert all((r["action"], r["status"]) in {("CREATE", "COMPLETE"), ("UPDATE", "COMPLETE")}
               for r in members.values()), members
    # Member 2 was replaced; the nested stack its cut-short create made went
    # with the original row, not the replacement's.
    assert not next(r for r in probe.resources(group_id) if r["id"] == original["id"])["current"]
    assert members["2"]["replaces"] == original["id"]
    assert members["2"]["physical_id"] != cut_short.id
    assert engine.db.get_stack(cut_short.id).deleted_at is not None
    # Each current member's nested stack is live and the only one.
    live = {c.id: c for c in engine.db.list_children(group_id) if c.deleted_at is None}
    assert set(live) == {r["physical_id"] for r in members.values()}
    for child_id, child in live.items():
        assert child.status == "COMPLETE", (child.action, child.status_reason)
        assert_exactly_once(probe, child_id, 1)
    assert_silent_since(probe, group_id, victim, killed)
