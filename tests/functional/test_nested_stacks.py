"""Nested stacks in embedded mode (no ZooKeeper, no RabbitMQ): each child its own stack."""

import pytest
import yaml

from nestedflow import exceptions, testing
from nestedflow.conf import CONF

MEMBER = """
heat_template_version: 2018-08-31
parameters:
  idx: {type: string}
  fail: {type: boolean, default: false}
resources:
  db:
    type: OS::Heat::TestResource
    properties: {value: {get_param: idx}, fail: {get_param: fail}}
outputs:
  val: {value: {get_attr: [db, output]}}
"""

def tree_template(count=3, member_props=None):
    inline = {
        "heat_template_version": "2018-08-31",
        "resources": {"x": {"type": "OS::Heat::TestResource", "properties": {"value": "inline"}}},
        "outputs": {"o": {"value": {"get_attr": ["x", "output"]}}},
    }
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "inline": {"type": "OS::Heat::Stack",
                       "properties": {"template": yaml.safe_dump(inline)}},
            "single": {"type": "member.yaml", "properties": {"idx": "single"}},
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": count,
                    "resource_def": {"type": "member.yaml",
                                     "properties": member_props or {"idx": "m%index%"}},
                },
            },
        },
        "outputs": {
            "inline": {"value": {"get_attr": ["inline", "outputs", "o"]}},
            "single": {"value": {"get_attr": ["single", "val"]}},
            "vals": {"value": {"get_attr": ["group", "val"]}},
            "second": {"value": {"get_attr": ["group", "resource.1.val"]}},
            "refs": {"value": {"get_attr": ["group", "refs"]}},
        },
    }


def settle(engine, stack, timeout=180):
    return engine.wait(stack.id, timeout=timeout)


def tree(engine, root_id):
    return [s for s in engine.list_stacks(show_nested=True)
            if s.id == root_id or engine.db.get_stack(s.id).root_id == root_id]


def test_tree_create_outputs_and_delete(engine, stack_name):
    stack = settle(engine, engine.create_stack(stack_name, tree_template(),
                                               files={"member.yaml": MEMBER}))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert stack.outputs["inline"] == "inline"
    assert stack.outputs["single"] == "single"
    assert stack.outputs["vals"] == ["m0", "m1", "m2"]
    assert stack.outputs["second"] == "m1"
    # Every nested stack is a stack row of its own, under the same root.
    stacks = tree(engine, stack.id)
    assert len(stacks) == 1 + 1 + 1 + 1 + 3
    rows = {r.name: r for r in engine.list_resources(stack.id)}
    group_child = engine.db.get_stack(rows["group"].physical_id)
    assert group_child.parent_id == stack.id and group_child.owner_resource == "group"
    assert stack.outputs["refs"] == [
        r.physical_id for r in sorted(engine.list_resources(group_child.id),
                                      key=lambda r: int(r.name))]
    assert len(testing.physical_objects(engine)) >= 5
    stack = settle(engine, engine.delete_stack(stack.id))
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    for child in stacks:
        assert testing.physical_objects(engine, child.id) == []
        assert engine.get_stack(child.id).action == "DELETE"


DEEP = """
heat_template_version: 2018-08-31
parameters:
  idx: {type: string}
  fail: {type: boolean, default: false}
resources:
  inner: {type: member.yaml, properties: {idx: {get_param: idx}, fail: {get_param: fail}}}
outputs:
  val: {value: {get_attr: [inner, val]}}
"""


def test_failure_three_levels_down_rolls_back_whole_tree(engine, stack_name):
    template = tree_template(count=2)
    group = template["resources"]["group"]["properties"]
    # "%index%" becomes "0" (false) and "1" (true): only member 1 fails, in
    # group -> member (deep.yaml) -> inner (member.yaml) -> db.
    group["resource_def"] = {"type": "deep.yaml",
                             "properties": {"idx": "m%index%", "fail": "%index%"}}
    files = {"member.yaml": MEMBER, "deep.yaml": DEEP}
    stack = settle(engine, engine.create_stack(stack_name, template, files=files))
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE")
    assert ("resources.group.resources[1].resources.inner.resources.db: "
            "Test Resource failed") in stack.status_reason
    for member in tree(engine, stack.id):
        assert testing.physical_objects(engine, member.id) == []


def _child_traversals(engine, stack_id):
    return {r.name: engine.db.get_stack(r.physical_id).current_traversal
            for r in engine.list_resources(stack_id)}


def test_update_touches_only_changed_children_and_scales_group(engine, stack_name):
    files = {"member.yaml": MEMBER}
    stack = settle(engine, engine.create_stack(stack_name, tree_template(count=3), files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    before = _child_traversals(engine, stack.id)
    group_id = {r.name: r.physical_id for r in engine.list_resources(stack.id)}["group"]
    members_before = _child_traversals(engine, group_id)

    # Scale up: only the group's child stack gets a traversal; existing members none.
    stack = settle(engine, engine.update_stack(stack.id, tree_template(count=5), files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    after = _child_traversals(engine, stack.id)
    assert after["inline"] == before["inline"] and after["single"] == before["single"]
    assert after["group"] != before["group"]
    members = _child_traversals(engine, group_id)
    assert sorted(members, key=int) == ["0", "1", "2", "3", "4"]
    assert all(members[m] == members_before[m] for m in members_before)
    assert stack.outputs["vals"] == ["m0", "m1", "m2", "m3", "m4"]

    # Scale down removes the highest indexes and their objects.
    removed = {m: engine.db.get_stack(
        {r.name: r.physical_id for r in engine.list_resources(group_id)}[m]).id
        for m in ("2", "3", "4")}
    stack = settle(engine, engine.update_stack(stack.id, tree_template(count=2), files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    assert sorted(_child_traversals(engine, group_id), key=int) == ["0", "1"]
    for child_id in removed.values():
        assert testing.physical_objects(engine, child_id) == []
    assert stack.outputs["vals"] == ["m0", "m1"]

    # Changing the member template file updates the members, not the others.
    before = _child_traversals(engine, stack.id)
    files = {"member.yaml": MEMBER.replace("db:", "db:  # v2\n   ").replace(
        "value: {get_param: idx}", "value: {list_join: ['-', [v2, {get_param: idx}]]}")}
    stack = settle(engine, engine.update_stack(stack.id, tree_template(count=2), files=files))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs["vals"] == ["v2-m0", "v2-m1"]
    after = _child_traversals(engine, stack.id)
    assert after["inline"] == before["inline"]
    settle(engine, engine.delete_stack(stack.id))


def test_nested_validation_errors_before_anything_is_stored(engine, stack_name):
    loop_a = "heat_template_version: 2018-08-31\nresources:\n  b: {type: b.yaml}\n"
    loop_b = "heat_template_version: 2018-08-31\nresources:\n  a: {type: a.yaml}\n"
    root = {"heat_template_version": "2018-08-31", "resources": {"a": {"type": "a.yaml"}}}
    with pytest.raises(exceptions.StackValidationFailed, match="a.yaml -> b.yaml -> a.yaml"):
        engine.create_stack(stack_name, root, files={"a.yaml": loop_a, "b.yaml": loop_b})
    group = {"heat_template_version": "2018-08-31", "resources": {"g": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": -1, "resource_def": {"type": "OS::Heat::None"}}}}}
    with pytest.raises(exceptions.StackValidationFailed, match="resources.g.properties.count"):
        engine.create_stack(stack_name, group)
    group["resources"]["g"]["properties"] = {"count": 1, "resource_def": {"type": "OS::Nope"}}
    with pytest.raises(exceptions.UnknownResourceType, match="resource_def.type"):
        engine.create_stack(stack_name, group)
    chain = {f"l{i}.yaml": f"heat_template_version: 2018-08-31\nresources:\n"
             f"  n: {{type: l{i + 1}.yaml}}\n" for i in range(7)}
    chain["l7.yaml"] = "heat_template_version: 2018-08-31\nresources: {}\n"
    root = {"heat_template_version": "2018-08-31", "resources": {"n": {"type": "l0.yaml"}}}
    with pytest.raises(exceptions.StackValidationFailed, match="maximum of 5"):
        engine.create_stack(stack_name, root, files=chain)
    assert engine.list_stacks(show_nested=True) == [] or all(
        s.name != stack_name for s in engine.list_stacks(show_nested=True))


def binary_tree_files(depth):
    """level{i}.yaml holds two level{i+1}.yaml; the last level two TestResources."""
    files = {}
    for level in range(depth):
        child = f"level{level + 1}.yaml" if level + 1 < depth else "OS::Heat::TestResource"
        props = "{}" if level + 1 < depth else "{value: leaf, wait_secs: 0.05}"
        files[f"level{level}.yaml"] = (
            "heat_template_version: 2018-08-31\nresources:\n"
            f"  left: {{type: {child}, properties: {props}}}\n"
            f"  right: {{type: {child}, properties: {props}}}\n")
    return files


@pytest.fixture
def deep_limits():
    CONF.set_override("max_nested_stack_depth", 7, group="engine")
    yield
    CONF.clear_override("max_nested_stack_depth", group="engine")


def test_deep_tree_on_two_workers_and_two_slots(make_engine, pg_url, stack_name, deep_limits):
    from nestedflow.dispatch import impl_local as local

    # Embedded, four levels (16 stacks) on two job slots; the six-level tree
    # runs on real conductors in test_nested_conductors.py.
    engine = make_engine(pg_url, max_workers=2)
    # Two job slots: parents waiting on children must give theirs up.
    engine._dispatcher.close()
    engine._dispatcher = local.LocalDispatcher(engine.runtime, engine._backend, slots=2)
    engine._dispatcher.add_done_callback(engine._notify_settled)
    files = binary_tree_files(4)
    root = {"heat_template_version": "2018-08-31",
            "resources": {"tree": {"type": "level0.yaml"}}}
    stack = settle(engine, engine.create_stack(stack_name, root, files=files), timeout=300)
    assert stack.status == "COMPLETE", stack.status_reason
    assert len(_live_in_tree(engine, stack.id)) == 2 ** 4
    depth = max(engine.db.get_stack(s.id).nested_depth for s in tree(engine, stack.id))
    assert depth == 4
    ids = [s.id for s in tree(engine, stack.id)]
    stack = settle(engine, engine.delete_stack(stack.id), timeout=300)
    assert stack.status == "COMPLETE"
    assert [o for i in ids for o in testing.physical_objects(engine, i)] == []


def _live_in_tree(engine, root_id):
    return [o for s in tree(engine, root_id) for o in testing.physical_objects(engine, s.id)]


def test_nested_depth_listing(engine, stack_name):
    stack = settle(engine, engine.create_stack(stack_name, tree_template(count=2),
                                               files={"member.yaml": MEMBER}))
    assert stack.status == "COMPLETE", stack.status_reason
    top = engine.list_resources(stack.id)
    assert {r.name for r in top} == {"inline", "single", "group"}
    two = engine.list_resources(stack.id, nested_depth=2)
    # inline: x; single: db; group: 0, 1; members: db, db.
    assert sorted(r.name for r in two) == sorted(
        ["inline", "single", "group", "x", "db", "0", "1", "db", "db"])
    assert {r.stack_name for r in two} > {stack.name}
    events = engine.list_events(stack.id, nested_depth=1)
    assert any(e.resource_name == "x" and e.status == "COMPLETE" for e in events)
    assert [e.timestamp for e in events] == sorted(e.timestamp for e in events)
    nested = [s for s in engine.list_stacks(show_nested=True) if s.parent_id]
    assert nested and all(s.id not in {t.id for t in engine.list_stacks()} for s in nested)
    settle(engine, engine.delete_stack(stack.id))


def test_only_top_level_stacks_hold_their_name(engine, stack_name):
    """A nested stack does not hold its name: a top-level stack may take it
    (and then does hold it)."""
    inline = yaml.safe_dump({"heat_template_version": "2018-08-31",
                             "resources": {"x": {"type": "OS::Heat::None"}}})
    parent = {"heat_template_version": "2018-08-31",
              "resources": {"child": {"type": "OS::Heat::Stack",
                                      "properties": {"template": inline}}}}
    first = settle(engine, engine.create_stack(stack_name, parent))
    assert first.stack_status == "CREATE_COMPLETE", first.status_reason
    (child,) = engine.db.list_children(first.id)
    top = settle(engine, engine.create_stack(child.name, parent))
    assert top.stack_status == "CREATE_COMPLETE", top.status_reason
    (second_child,) = engine.db.list_children(top.id)
    assert second_child.name != child.name  # named after its own parent
    with pytest.raises(exceptions.StackExists):
        engine.create_stack(child.name, parent)
