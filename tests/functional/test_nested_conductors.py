"""Decoupled nested stacks on real conductors, ZooKeeper, RabbitMQ and PostgreSQL.

Each nested stack is a job of its own: the tests read from the recorded
events which conductor ran what, and from the physical store that the
whole tree converged with nothing leaked.
"""

import collections

import pytest
import sqlalchemy as sa
from test_nested_stacks import DEEP, MEMBER, binary_tree_files, tree_template

from nestedflow.conf import CONF
from nestedflow.db import models

pytestmark = pytest.mark.functional


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


@pytest.fixture
def deep_conf(tmp_path):
    """Depth limit 7 for the conductors (a config file) and for this process."""
    conf = tmp_path / "deep.conf"
    conf.write_text("[engine]\nmax_nested_stack_depth = 7\n")
    CONF.set_override("max_nested_stack_depth", 7, group="engine")
    yield ("--config-file", str(conf))
    CONF.clear_override("max_nested_stack_depth", group="engine")


def tree_stacks(engine, root_id):
    """Every stack of the tree, deleted ones included."""
    with engine.db.reader() as session:
        return list(session.scalars(
            sa.select(models.Stack).where(models.Stack.root_id == root_id)))


def runners_by_stack(probe, stack_ids):
    """stack id -> set of conductors that completed a resource action in it."""
    runners = collections.defaultdict(set)
    for stack_id in stack_ids:
        for event in probe.events(stack_id):
            if event["resource_name"] and event["status"] == "COMPLETE" and event["engine_id"]:
                runners[stack_id].add(event["engine_id"])
    return runners


def live_objects(probe, stack_ids):
    return [o for s in stack_ids for o in probe.physical(s) if o["deleted_at"] is None]


def settle(engine, stack, timeout=300):
    return engine.wait(stack.id, timeout=timeout)


def test_deep_tree_on_one_conductor_with_two_actions(cluster, probe, deep_conf):
    """Six levels, two children each: parents waiting on children must not
    hold the conductor's two action slots."""
    cluster.start("solo", job_slots=2, workers=2, extra=deep_conf)
    engine = cluster.engine()
    root = {"heat_template_version": "2018-08-31",
            "resources": {"tree": {"type": "level0.yaml"}}}
    stack = settle(engine, engine.create_stack("deep-solo", root, files=binary_tree_files(6)))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    ids = [s.id for s in tree_stacks(engine, stack.id)]
    assert len(ids) == 64  # the root, then 1 + 2 + 4 + 8 + 16 + 32 nested stacks
    assert len(live_objects(probe, ids)) == 64
    assert set().union(*runners_by_stack(probe, ids).values()) == {"solo"}
    stack = settle(engine, engine.delete_stack(stack.id))
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE"), stack.status_reason
    assert live_objects(probe, ids) == []


def test_tree_spreads_over_three_single_action_conductors(cluster, probe, deep_conf):
    cluster.start_many(["n1", "n2", "n3"], job_slots=1, workers=1, extra=deep_conf)
    engine = cluster.engine()
    root = {"heat_template_version": "2018-08-31",
            "resources": {"tree": {"type": "level0.yaml"}}}
    stack = settle(engine, engine.create_stack("deep-three", root, files=binary_tree_files(6)))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    ids = [s.id for s in tree_stacks(engine, stack.id)]
    assert len(ids) == 64 and len(live_objects(probe, ids)) == 64
    runners = runners_by_stack(probe, ids)
    used = set().union(*runners.values())
    # Which conductors win the claims is up to ZooKeeper; the tree must not
    # have stayed on one of them.
    assert len(used) >= 2 and used <= {"n1", "n2", "n3"}, used
    # A parent and its child ran on different conductors somewhere in the tree.
    rows = {s: engine.db.get_stack(s) for s in ids}
    assert any(runners[s] and runners[rows[s].parent_id]
               and runners[s] != runners[rows[s].parent_id]
               for s in ids if rows[s].parent_id)
    settle(engine, engine.delete_stack(stack.id))
    assert live_objects(probe, ids) == []


def test_failure_three_levels_down_rolls_back_the_tree(cluster, probe):
    cluster.start_many(["f1", "f2"], job_slots=2, workers=2)
    engine = cluster.engine()
    template = tree_template(count=2)
    template["resources"]["group"]["properties"]["resource_def"] = {
        "type": "deep.yaml", "properties": {"idx": "m%index%", "fail": "%index%"}}
    stack = settle(engine, engine.create_stack("fails-deep", template,
                                               files={"member.yaml": MEMBER, "deep.yaml": DEEP}))
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert ("resources.group.resources[1].resources.inner.resources.db: "
            "Test Resource failed") in stack.status_reason
    ids = [s.id for s in tree_stacks(engine, stack.id)]
    assert len(ids) > 4
    assert live_objects(probe, ids) == []


def test_group_update_touches_only_the_changed_member_and_scales(cluster, probe):
    cluster.start_many(["g1", "g2"], job_slots=2, workers=2)
    engine = cluster.engine()
    files = {"member.yaml": MEMBER}
    group = {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 3, "resource_def": {
            "type": "member.yaml",
            "properties": {"idx": "m%index%"}}}}},
        "outputs": {"vals": {"value": {"get_attr": ["group", "val"]}}}}
    stack = settle(engine, engine.create_stack("group-upd", group, files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    group_id = engine.list_resources(stack.id)[0].physical_id

    def member_stacks():
        return {r.name: engine.db.get_stack(r.physical_id)
                for r in engine.list_resources(group_id)}

    before = member_stacks()
    # Remove member 1 through the removal policy: only it goes; 0 and 2 untouched.
    group["resources"]["group"]["properties"]["removal_policies"] = [{"resource_list": ["1"]}]
    group["resources"]["group"]["properties"]["count"] = 2
    stack = settle(engine, engine.update_stack(stack.id, group, files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    after = member_stacks()
    assert sorted(after) == ["0", "2"]
    assert all(after[m].current_traversal == before[m].current_traversal for m in after)
    assert live_objects(probe, [before["1"].id]) == []
    assert stack.outputs["vals"] == ["m0", "m2"]
    # Scale up: new indexes after the removed one, existing members untouched.
    group["resources"]["group"]["properties"]["count"] = 4
    stack = settle(engine, engine.update_stack(stack.id, group, files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    grown = member_stacks()
    assert sorted(grown, key=int) == ["0", "2", "3", "4"]
    assert all(grown[m].current_traversal == after[m].current_traversal for m in after)
    assert stack.outputs["vals"] == ["m0", "m2", "m3", "m4"]
    settle(engine, engine.delete_stack(stack.id))
    assert live_objects(probe, [s.id for s in grown.values()]) == []
