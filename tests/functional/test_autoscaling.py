"""``OS::Heat::AutoScalingGroup`` and ``OS::Heat::ScalingPolicy`` as Heat's.

Followed: heat/engine/resources/openstack/heat/autoscaling_group.py,
instance_group.py (_create_template, _replace, resize), aws/autoscaling/
autoscaling_group.py (validate, handle_update, adjust), heat/scaling/
(scalingutil.calculate_new_capacity, rolling_update.next_batch,
template.member_definitions, cooldown) and scaling_policy.py; the tests
mirror heat/tests/autoscaling/test_heat_scaling_group.py and
test_heat_scaling_policy.py (test_scaling_policy_up/down, cooldown,
percent with min_adjustment_step, rolling update batches).
"""

import time

import pytest

from nestedflow import exceptions
from nestedflow.resources import autoscaling
from nestedflow.testing import physical_objects

TR = "OS::Heat::TestResource"


def template(desired=2, value="v1", batch=2, pause=0, min_size=1, max_size=5, cooldown=0,
             adjustment_type="change_in_capacity", percent_step=None):
    down = {"auto_scaling_group_id": {"get_resource": "group"}, "scaling_adjustment": -1,
            "adjustment_type": "change_in_capacity", "cooldown": cooldown}
    up = {"auto_scaling_group_id": {"get_resource": "group"},
          "scaling_adjustment": 1 if adjustment_type == "change_in_capacity" else 50,
          "adjustment_type": adjustment_type, "cooldown": cooldown}
    if percent_step is not None:
        up["min_adjustment_step"] = percent_step
    return {
        "heat_template_version": "2015-04-30",
        "resources": {
            "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                "min_size": min_size, "max_size": max_size, "desired_capacity": desired,
                "rolling_updates": {"max_batch_size": batch, "pause_time": pause},
                "resource": {"type": TR, "properties": {"value": value}}}},
            "up": {"type": "OS::Heat::ScalingPolicy", "properties": up},
            "down": {"type": "OS::Heat::ScalingPolicy", "properties": down},
        },
        "outputs": {
            "size": {"value": {"get_attr": ["group", "current_size"]}},
            "refs": {"value": {"get_attr": ["group", "refs"]}},
            "refs_map": {"value": {"get_attr": ["group", "refs_map"]}},
            "values": {"value": {"get_attr": ["group", "outputs_list", "output"]}},
            "by_name": {"value": {"get_attr": ["group", "outputs", "output"]}},
            "up_url": {"value": {"get_attr": ["up", "signal_url"]}},
            "alarm_url": {"value": {"get_attr": ["up", "alarm_url"]}},
        },
    }


def test_capacity_arithmetic_is_heats():
    """heat/tests/autoscaling/test_scaling_util.py (calculate_new_capacity)
    and test_rolling_update.py (next_batch)."""
    calc = autoscaling.calculate_new_capacity
    assert calc(10, 1, "change_in_capacity", None, 1, 11) == 11
    assert calc(10, 5, "change_in_capacity", None, 1, 11) == 11  # capped at max
    assert calc(3, -5, "change_in_capacity", None, 1, 11) == 1   # floored at min
    assert calc(10, 3, "exact_capacity", None, 1, 11) == 3
    assert calc(10, 33, "percent_change_in_capacity", None, 1, 20) == 13
    assert calc(4, 10, "percent_change_in_capacity", None, 1, 20) == 5  # |delta|<1 -> 1
    assert calc(10, 10, "percent_change_in_capacity", 3, 1, 20) == 13  # min_adjustment_step
    assert calc(10, -10, "percent_change_in_capacity", 3, 1, 20) == 7
    assert list(autoscaling.batches(4, 4, 2, 0)) == [(4, 2), (4, 2)]
    # min_in_service 3 with 3 members: grow to 5 first, then shrink back.
    assert list(autoscaling.batches(3, 3, 2, 3)) == [(5, 2), (4, 1), (3, 0)]


def _members(engine, stack_id):
    group = next(r for r in engine.list_resources(stack_id) if r.name == "group")
    child = engine.db.get_stack(group.physical_id)
    return group.physical_id, [r.name for r in sorted(engine.db.list_resources(child.id),
                                                       key=lambda r: r.id)]


def _settle_child(engine, stack_id):
    child_id, _ = _members(engine, stack_id)
    return engine.wait(child_id, timeout=120)


def _live(engine, stack_id):
    child_id, _ = _members(engine, stack_id)
    return sorted(o.properties["value"] for o in physical_objects(engine, child_id))


def test_group_scaled_by_policies_and_desired_capacity(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(desired=2))
    done = engine.wait(stack.id, timeout=120)
    assert (done.action, done.status) == ("CREATE", "COMPLETE"), done.status_reason
    assert done.outputs["size"] == 2
    assert done.outputs["values"] == ["v1", "v1"]
    child_id, first = _members(engine, stack.id)
    assert len(first) == 2 and done.outputs["refs"] == [
        done.outputs["refs_map"][n] for n in first]
    assert done.outputs["by_name"] == {n: "v1" for n in first}
    assert done.outputs["up_url"].endswith(f"/{stack.id}/resources/up/signal")

    # Scale up by the "up" policy's signal: one member more, the old kept.
    engine.signal_resource(stack.id, "up")
    _settle_child(engine, stack.id)
    _, after_up = _members(engine, stack.id)
    assert after_up[:2] == first and len(after_up) == 3
    assert len(physical_objects(engine, child_id)) == 3
    signal_events = [e.status_reason for e in engine.list_events(stack.id)
                     if e.resource_name == "up" and e.action == "SIGNAL"]
    assert signal_events == ["Signal: change_in_capacity : 1"]
    # The group resource keeps its state, as in Heat.
    group = next(r for r in engine.list_resources(stack.id) if r.name == "group")
    assert (group.action, group.status) == ("CREATE", "COMPLETE")

    # Scale down: the oldest member goes (member_definitions keeps the newest).
    engine.signal_resource(stack.id, "down")
    _settle_child(engine, stack.id)
    _, after_down = _members(engine, stack.id)
    assert after_down == after_up[1:]
    assert len(physical_objects(engine, child_id)) == 2

    # desired_capacity changed by an update: resized to 4, newest kept.
    engine.update_stack(stack.id, template(desired=4))
    done = engine.wait(stack.id, timeout=120)
    assert (done.action, done.status) == ("UPDATE", "COMPLETE"), done.status_reason
    _, resized = _members(engine, stack.id)
    assert resized[:2] == after_down and len(resized) == 4
    assert done.outputs["size"] == 4
    assert len(physical_objects(engine, child_id)) == 4


def test_rolling_update_in_batches_of_two(sqlite_engine, stack_name):
    """_replace: batches of max_batch_size; each batch's members are
    updated before the next batch starts (the event order shows it)."""
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(desired=4, batch=2, pause=1))
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    child_id, names = _members(engine, stack.id)
    engine.update_stack(stack.id, template(desired=4, value="v2", batch=2, pause=1))
    done = engine.wait(stack.id, timeout=180)
    assert (done.action, done.status) == ("UPDATE", "COMPLETE"), done.status_reason
    assert done.outputs["values"] == ["v2"] * 4
    completes = [e.resource_name for e in engine.list_events(child_id)
                 if e.action == "UPDATE" and e.status == "COMPLETE" and e.resource_name in names]
    starts = [e.resource_name for e in engine.list_events(child_id) if e.action == "UPDATE"
              and e.status == "IN_PROGRESS" and e.resource_name in names]
    # Oldest first, two at a time: the first two finish before the last two start.
    assert set(completes[:2]) == set(names[:2]) and set(completes[2:]) == set(names[2:])
    events = [(e.resource_name, e.status) for e in engine.list_events(child_id)
              if e.action == "UPDATE" and e.resource_name in names]
    last_of_first = max(events.index((n, "COMPLETE")) for n in names[:2])
    first_of_second = min(events.index((n, "IN_PROGRESS")) for n in names[2:])
    assert last_of_first < first_of_second
    assert len(starts) == 4
    assert len(physical_objects(engine, child_id)) == 4


def test_validation_cooldown_and_percent(sqlite_engine, stack_name):
    engine = sqlite_engine
    with pytest.raises(exceptions.StackValidationFailed,
                       match="DesiredCapacity must be between MinSize and MaxSize"):
        engine.create_stack(stack_name, template(desired=9))
    with pytest.raises(exceptions.StackValidationFailed,
                       match="MinSize can not be greater than MaxSize"):
        engine.create_stack(stack_name, template(min_size=3, max_size=2, desired=2))
    stack = engine.create_stack(stack_name, template(
        desired=2, cooldown=600, adjustment_type="percent_change_in_capacity", percent_step=2))
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    engine.signal_resource(stack.id, "up")  # 50% of 2 = 1, min step 2 -> +2
    _settle_child(engine, stack.id)
    assert len(_members(engine, stack.id)[1]) == 4
    # In cooldown: accepted, nothing changes, no SIGNAL event (NoActionRequired).
    engine.signal_resource(stack.id, "down")
    time.sleep(0.5)
    _settle_child(engine, stack.id)
    assert len(_members(engine, stack.id)[1]) == 4
    assert not [e for e in engine.list_events(stack.id)
                if e.resource_name == "down" and e.action == "SIGNAL"]


def test_delete_and_rollback(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(desired=2))
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    child_id, names = _members(engine, stack.id)
    bad = template(desired=3)
    bad["resources"]["group"]["properties"]["resource"]["properties"]["fail"] = True
    engine.update_stack(stack.id, bad)
    done = engine.wait(stack.id, timeout=180)
    assert (done.action, done.status) == ("ROLLBACK", "COMPLETE"), done.status_reason
    assert _members(engine, stack.id)[1][:2] == names
    assert len(physical_objects(engine, child_id)) == 2
    engine.delete_stack(stack.id)
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    assert physical_objects(engine, child_id) == []


def test_policy_update_in_place_and_replace(sqlite_engine, stack_name):
    """AutoScalingPolicy: scaling_adjustment, adjustment_type, cooldown and
    min_adjustment_step update in place (handle_update); a new
    auto_scaling_group_id (not update_allowed) replaces the policy; a
    min_adjustment_step without percent_change_in_capacity is refused
    (_validate_min_adjustment_step)."""
    engine = sqlite_engine
    two_groups = template(desired=1)
    two_groups["resources"]["other"] = dict(two_groups["resources"]["group"])
    stack = engine.create_stack(stack_name, two_groups)
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    before = {r.name: r.physical_id for r in engine.list_resources(stack.id)}
    in_place = template(desired=1)
    in_place["resources"]["other"] = dict(in_place["resources"]["group"])
    in_place["resources"]["up"]["properties"]["scaling_adjustment"] = 2
    engine.update_stack(stack.id, in_place)
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    after = {r.name: r.physical_id for r in engine.list_resources(stack.id)}
    assert after["up"] == before["up"]
    engine.signal_resource(stack.id, "up")
    _settle_child(engine, stack.id)
    assert len(_members(engine, stack.id)[1]) == 3  # 1 + the new adjustment 2
    replaced = dict(in_place)
    replaced["resources"] = dict(in_place["resources"])
    replaced["resources"]["up"] = {"type": "OS::Heat::ScalingPolicy", "properties": dict(
        in_place["resources"]["up"]["properties"],
        auto_scaling_group_id={"get_resource": "other"})}
    engine.update_stack(stack.id, replaced)
    assert engine.wait(stack.id, timeout=120).status == "COMPLETE"
    after = {r.name: r.physical_id for r in engine.list_resources(stack.id)}
    assert after["up"] != before["up"]
    bad = template(desired=1)
    bad["resources"]["down"]["properties"]["min_adjustment_step"] = 1
    with pytest.raises(exceptions.StackValidationFailed,
                       match="min_adjustment_step property should only be specified"):
        engine.create_stack(f"{stack_name}-bad", bad)
