"""OS::Heat::Value, Delay, DeployedServer and ResourceChain: create, an
in-place and a replacing update, delete and rollback, with Heat's
attribute values and states (each test names the Heat code it follows)."""

import time

import pytest

from nestedflow import exceptions
from tests.functional import heat_type_lifecycle as lc

pytestmark = pytest.mark.functional


def test_value(sqlite_engine, stack_name):
    """heat/engine/resources/openstack/heat/value.py; heat/tests/openstack/heat/
    test_value.py: the attribute is the value as its type makes it
    (TestValueSimple), both properties update in place and the resource is
    never replaced by a change of them (TestValueUpdate asserts the same
    ids); a value that does not fit its type is refused
    (TestValueLessSimple.test_validation_fail)."""
    engine = sqlite_engine
    outputs = {"value": {"get_attr": ["r", "value"]}}
    base = {"type": "OS::Heat::Value", "properties": {"value": "-11", "type": "number"}}
    inplace = {"type": "OS::Heat::Value",
               "properties": {"value": ["a", "b", "Z"], "type": "comma_delimited_list"}}
    changed = {"type": "OS::Heat::Value", "properties": {"value": {"a": "Z"}, "type": "json"}}
    steps = lc.run(engine, stack_name, base, inplace, changed, outputs, replace_unhealthy=True)
    assert steps.outputs["create"] == {"value": -11}
    assert steps.outputs["inplace"] == {"value": ["a", "b", "Z"]}
    assert steps.outputs["replace"] == {"value": {"a": "Z"}}
    assert steps.events["create"] == lc.CREATED
    assert steps.events["inplace"] == lc.UPDATED
    assert steps.ids["inplace"] == steps.ids["create"]
    # Heat's physical_resource_name(): <stack>-<resource>-<short id>.
    assert steps.ids["create"].startswith(f"{stack_name}-r-")
    # Marked unhealthy, it is replaced (a property change never replaces it).
    assert steps.events["replace"] == lc.REPLACED
    assert steps.ids["replace"] != steps.ids["create"]
    assert steps.events["delete"] == lc.DELETED

    stack, events = lc.rollback(engine, f"{stack_name}-rb", base, outputs)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    assert events == lc.CREATED + lc.DELETED

    bad = lc.template({"type": "OS::Heat::Value",
                       "properties": {"value": {"one": "croissant"}, "type": "number"}}, {})
    with pytest.raises(exceptions.StackValidationFailed, match=r"resources\.r\.properties"):
        engine.create_stack(f"{stack_name}-bad", bad)


def test_value_update_keeps_the_resource(sqlite_engine, stack_name):
    """TestValueUpdate: a change of value and type together is in place."""
    engine = sqlite_engine
    outputs = {"value": {"get_attr": ["r", "value"]}}
    one = {"type": "OS::Heat::Value", "properties": {"value": True, "type": "boolean"}}
    two = {"type": "OS::Heat::Value", "properties": {"value": -100.999, "type": "number"}}
    stack = engine.wait(engine.create_stack(stack_name, lc.template(one, outputs)).id, 60)
    first = lc.physical_id(engine, stack.id)
    stack = engine.wait(engine.update_stack(stack.id, lc.template(two, outputs)).id, 60)
    assert stack.outputs == {"value": -100.999}
    assert lc.physical_id(engine, stack.id) == first


def test_delay(sqlite_engine, stack_name):
    """heat/engine/resources/openstack/heat/delay.py (test_delay.py): it waits
    min_wait (+ jitter) during the listed actions only (default CREATE);
    every property updates in place; get_resource is its name (no resource
    id is set)."""
    engine = sqlite_engine
    outputs = {"ref": {"get_resource": "r"}}
    base = {"type": "OS::Heat::Delay", "properties": {"min_wait": 1}}
    inplace = {"type": "OS::Heat::Delay",
               "properties": {"min_wait": 1, "actions": ["CREATE", "DELETE"]}}
    started = time.monotonic()
    steps = lc.run(engine, stack_name, base, inplace, inplace, outputs, replace_unhealthy=True)
    # create (1 s), the replacement's create (1 s), its delete (1 s).
    assert time.monotonic() - started >= 3
    assert steps.outputs["create"] == {"ref": "r"}
    assert steps.events["create"] == lc.CREATED
    assert steps.events["inplace"] == lc.UPDATED
    assert steps.ids["inplace"] == steps.ids["create"]
    assert steps.events["replace"] == lc.REPLACED
    assert steps.events["delete"] == lc.DELETED

    started = time.monotonic()
    stack, events = lc.rollback(engine, f"{stack_name}-rb", base, outputs)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    assert events == lc.CREATED + lc.DELETED
    assert time.monotonic() - started >= 1

    with pytest.raises(exceptions.StackValidationFailed, match=r"properties\.actions"):
        engine.create_stack(f"{stack_name}-bad", lc.template(
            {"type": "OS::Heat::Delay", "properties": {"actions": ["UPDATE"]}}, {}))


def test_deployed_server(sqlite_engine, stack_name):
    """heat/engine/resources/openstack/heat/deployed_server.py: attribute name
    is the name property or physical_resource_name() (server_base._server_name);
    every property updates in place; os_collect_config is the agent
    configuration Heat keeps in the metadata (none here)."""
    engine = sqlite_engine
    outputs = {"name": {"get_attr": ["r", "name"]},
               "occ": {"get_attr": ["r", "os_collect_config"]}}
    base = {"type": "OS::Heat::DeployedServer", "properties": {}}
    inplace = {"type": "OS::Heat::DeployedServer", "properties": {"name": "web-1"}}
    steps = lc.run(engine, stack_name, base, inplace, inplace, outputs, replace_unhealthy=True)
    assert steps.outputs["create"]["name"].startswith(f"{stack_name}-r-")
    assert steps.outputs["create"]["occ"] == {}
    assert steps.outputs["inplace"]["name"] == "web-1"
    assert steps.events["inplace"] == lc.UPDATED
    assert steps.ids["inplace"] == steps.ids["create"]
    assert steps.events["replace"] == lc.REPLACED
    assert steps.ids["replace"] != steps.ids["create"]
    assert steps.events["delete"] == lc.DELETED
    stack, events = lc.rollback(engine, f"{stack_name}-rb", base, outputs)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert events == lc.CREATED + lc.DELETED


def test_resource_chain(sqlite_engine, stack_name):
    """heat/engine/resources/openstack/heat/resource_chain.py (test_resource_chain.py):
    members 0, 1... of the listed types, each with resource_properties and,
    unless concurrent, depending on the one before (test_child_template_*);
    ``resources`` updates in place, ``concurrent`` and ``resource_properties``
    replace; refs and attributes (test_aggregate_refs, test_aggregate_attribs)."""
    engine = sqlite_engine
    tr = "OS::Heat::TestResource"
    outputs = {"refs": {"get_attr": ["r", "refs"]},
               "attrs": {"get_attr": ["r", "attributes", "output"]},
               "first": {"get_attr": ["r", "resource.0.output"]}}
    base = {"type": "OS::Heat::ResourceChain",
            "properties": {"resources": [tr, tr], "resource_properties": {"value": "one"}}}
    inplace = {"type": "OS::Heat::ResourceChain",
               "properties": {"resources": [tr, tr, tr], "resource_properties": {"value": "one"}}}
    replace = {"type": "OS::Heat::ResourceChain",
               "properties": {"resources": [tr, tr, tr], "concurrent": True,
                              "resource_properties": {"value": "one"}}}
    steps = lc.run(engine, stack_name, base, inplace, replace, outputs)
    assert steps.outputs["create"]["attrs"] == {"0": "one", "1": "one"}
    assert steps.outputs["create"]["first"] == "one"
    assert len(steps.outputs["create"]["refs"]) == 2
    assert lc.collapsed(steps.events["create"]) == lc.CREATED
    assert lc.collapsed(steps.events["inplace"]) == lc.UPDATED
    assert steps.ids["inplace"] == steps.ids["create"]
    assert steps.outputs["inplace"]["refs"][:2] == steps.outputs["create"]["refs"]
    assert steps.outputs["inplace"]["attrs"] == {"0": "one", "1": "one", "2": "one"}
    assert lc.collapsed(steps.events["replace"]) == lc.REPLACED
    assert steps.ids["replace"] != steps.ids["create"]
    assert lc.collapsed(steps.events["delete"]) == lc.DELETED

    # Not concurrent: each member waits for the one before it.
    stack = engine.wait(engine.create_stack(f"{stack_name}-order", lc.template(
        {"type": "OS::Heat::ResourceChain",
         "properties": {"resources": [tr, tr], "resource_properties": {"wait_secs": 0.3}}},
        {})).id, 60)
    child = engine.list_resources(stack.id, nested_depth=1)
    members = {r.name: r for r in child if r.stack_name != stack.name}
    assert set(members) == {"0", "1"}
    events = [(e.resource_name, e.status) for e in engine.list_events(stack.id, nested_depth=1)
              if e.resource_name in ("0", "1")]
    assert events == [("0", "IN_PROGRESS"), ("0", "COMPLETE"), ("1", "IN_PROGRESS"),
                      ("1", "COMPLETE")]

    stack, events = lc.rollback(engine, f"{stack_name}-rb", base, {})
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    assert lc.collapsed(events) == lc.CREATED + lc.DELETED

    with pytest.raises(exceptions.UnknownResourceType, match="No::Such"):
        engine.create_stack(f"{stack_name}-bad", lc.template(
            {"type": "OS::Heat::ResourceChain", "properties": {"resources": ["No::Such"]}}, {}))
