"""Environments reach every child stack and group member, as in Heat
(heat/engine/environment.py get_child_environment; heat_integrationtests
functional/test_template_resource.py, test_resource_group.py)."""

import pytest

from nestedflow import exceptions

CHILD = """
heat_template_version: 2018-08-31
parameters:
  size: {type: string}
resources:
  server:
    type: OS::Nova::Server
  value:
    type: OS::Heat::TestResource
    properties: {value: {get_param: size}}
outputs:
  size: {value: {get_attr: [value, output]}}
"""

PARENT = {
    "heat_template_version": "2018-08-31",
    "resources": {
        # No size property: parameter_defaults supplies it to the child.
        "tmpl": {"type": "My::Child"},
        "group": {"type": "OS::Heat::ResourceGroup",
                  "properties": {"count": 2, "resource_def": {"type": "OS::Nova::Server"}}},
        "cgroup": {"type": "OS::Heat::ResourceGroup",
                   "properties": {"count": 2, "resource_def": {"type": "My::Child"}}},
        "special": {"type": "OS::Nova::Server"},
    },
    "outputs": {
        "size": {"value": {"get_attr": ["tmpl", "size"]}},
        "sizes": {"value": {"get_attr": ["cgroup", "size"]}},
        "special": {"value": {"get_attr": ["special", "output"]}},
    },
}

ENVIRONMENT = {
    "parameter_defaults": {"size": "large"},
    "resource_registry": {
        "OS::Nova::*": "OS::Heat::None",
        "My::Child": "child.yaml",
        "resources": {"special": {"OS::Nova::Server": "OS::Heat::TestResource"}},
    },
}


def _types(engine, stack_id):
    return {r.name: r.type for r in engine.list_resources(stack_id)}


def test_registry_and_defaults_reach_children_and_members(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(stack_name, PARENT, files={"child.yaml": CHILD},
                                            environment=ENVIRONMENT).id, timeout=120)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert stack.outputs == {"size": "large", "sizes": ["large", "large"],
                             "special": "test_string"}
    types = _types(engine, stack.id)
    assert types["special"] == "OS::Heat::TestResource"  # the per-resource entry
    assert types["tmpl"] == "child.yaml"
    rows = {r.name: r for r in engine.list_resources(stack.id)}
    assert set(_types(engine, rows["group"].physical_id).values()) == {"OS::Heat::None"}
    child = rows["tmpl"].physical_id
    assert _types(engine, child)["server"] == "OS::Heat::None"
    for member in engine.list_resources(rows["cgroup"].physical_id):
        assert _types(engine, member.physical_id)["server"] == "OS::Heat::None"
    stack = engine.wait(engine.delete_stack(stack.id).id, timeout=120)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")


def test_list_of_environments_merged_in_order(sqlite_engine, stack_name):
    engine = sqlite_engine
    first = "resource_registry:\n  'OS::Nova::*': OS::Heat::TestResource\n"
    second = {"resource_registry": {"OS::Nova::*": "OS::Heat::None",
                                    "My::Child": "child.yaml"},
              "parameter_defaults": {"size": "small"}}
    template = {"heat_template_version": "2018-08-31",
                "resources": {"tmpl": {"type": "My::Child"}, "s": {"type": "OS::Nova::Server"}},
                "outputs": {"size": {"value": {"get_attr": ["tmpl", "size"]}}}}
    stack = engine.wait(engine.create_stack(stack_name, template, files={"child.yaml": CHILD},
                                            environment=[first, second]).id, timeout=120)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert stack.outputs == {"size": "small"}
    assert _types(engine, stack.id)["s"] == "OS::Heat::None"


def test_missing_parameter_in_child_is_refused_before_storing(sqlite_engine, stack_name):
    engine = sqlite_engine
    env = {"resource_registry": dict(ENVIRONMENT["resource_registry"])}
    with pytest.raises(exceptions.StackValidationFailed) as info:
        engine.create_stack(stack_name, PARENT, files={"child.yaml": CHILD}, environment=env)
    assert str(info.value) == "resources.tmpl.properties.size: property is required"
    assert engine.list_stacks() == []


def test_validate_template_uses_the_environment_in_nested_templates(sqlite_engine):
    """Engine.validate_template checks a nested template with the child
    environment: its OS::Nova::Server is mapped, its size comes from
    parameter_defaults."""
    answer = sqlite_engine.validate_template(PARENT, files={"child.yaml": CHILD},
                                             environment=ENVIRONMENT)
    assert answer["Environment"]["resource_registry"]["My::Child"] == "child.yaml"
    with pytest.raises(exceptions.StackValidationFailed, match="OS::Nova::Server"):
        sqlite_engine.validate_template(PARENT, files={"child.yaml": CHILD}, environment={
            "parameter_defaults": {"size": "large"},
            "resource_registry": {"My::Child": "child.yaml"}})
