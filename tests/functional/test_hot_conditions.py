"""Conditions, if and attribute semantics through the engine, on a real database.

Heat's behaviour followed: heat/engine/conditions.py, heat/engine/hot/template.py
(HOTemplate20161014.resource_definitions skips a resource whose condition is
false; outputs with a false condition have the value None), heat/engine/rsrc_defn.py
(depends_on a conditionally defined resource is allowed), If/IfNullable in
heat/engine/hot/functions.py, NoneResource.get_attribute (any attribute is None).
"""

import json

import pytest

from nestedflow import exceptions, testing

CONDITIONAL = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "env": {"type": "string", "default": "prod"},
        "zones": {"type": "comma_delimited_list", "default": "az1,az2"},
    },
    "conditions": {
        "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
        "is_dev": {"not": "is_prod"},
        "two_zones": {"and": ["is_prod", {"contains": ["az2", {"get_param": "zones"}]}]},
    },
    "resources": {
        "dev_only": {"type": "OS::Heat::TestResource", "condition": "is_dev",
                     "properties": {"value": "dev"}},
        "prod_only": {"type": "OS::Heat::TestResource", "condition": "two_zones",
                      "properties": {"value": {"yaql": {
                          "expression": "$.data.z.join('+')",
                          "data": {"z": {"get_param": "zones"}}}}}},
        "user": {"type": "OS::Heat::TestResource",
                 "depends_on": ["dev_only"],
                 "properties": {
                     "value": {"if": ["is_dev", {"get_attr": ["dev_only", "output"]},
                                      {"get_attr": ["prod_only", "output"]}]}}},
        "placeholder": {"type": "OS::Heat::None", "properties": {"anything": 1}},
    },
    "outputs": {
        "user": {"value": {"get_attr": ["user", "output"]}},
        "dev": {"value": {"get_attr": ["dev_only", "output"]}, "condition": "is_dev"},
        "none_attr": {"value": {"get_attr": ["placeholder", "first_address"]}},
        "digest": {"value": {"digest": ["md5", "foobar"]}},
        "url": {"value": {"make_url": {"scheme": "http", "host": "::1", "path": "/a"}}},
        "filtered": {"value": {"filter": [[None], [1, None, 2]]}},
        "maybe": {"value": {"if": ["is_dev", "dev-value"]}},
    },
}


def settle(engine, stack, timeout=120):
    return engine.wait(stack.id, timeout=timeout)


def test_false_condition_resource_is_not_created(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, CONDITIONAL))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    names = sorted(r.name for r in engine.list_resources(stack.id))
    assert names == ["placeholder", "prod_only", "user"]
    assert stack.outputs["user"] == "az1+az2"
    assert stack.outputs["dev"] is None  # its condition is false
    assert stack.outputs["none_attr"] is None  # OS::Heat::None answers any attribute
    assert stack.outputs["digest"] == "3858f62230ac3c915f300c664312c63f"
    assert stack.outputs["url"] == "http://[::1]/a"
    assert stack.outputs["filtered"] == [1, 2]
    assert stack.outputs["maybe"] is None  # nullable if with no false value

    dev = settle(engine, engine.create_stack(stack_name + "-dev", CONDITIONAL,
                                             parameters={"env": "dev"}))
    assert dev.status == "COMPLETE", dev.status_reason
    assert sorted(r.name for r in engine.list_resources(dev.id)) == [
        "dev_only", "placeholder", "user"]
    assert dev.outputs["user"] == "dev" and dev.outputs["maybe"] == "dev-value"
    for created in (stack, dev):
        done = settle(engine, engine.delete_stack(created.id))
        assert (done.action, done.status) == ("DELETE", "COMPLETE")


def _bad(resources=None, outputs=None, version="2021-04-16", conditions=None):
    tmpl = {"heat_template_version": version,
            "parameters": {"env": {"type": "string", "default": "prod"}},
            "resources": resources or {"a": {"type": "OS::Heat::None"}}}
    if conditions is not None:
        tmpl["conditions"] = conditions
    if outputs:
        tmpl["outputs"] = outputs
    return tmpl


@pytest.mark.parametrize("tmpl, path, fragment", [
    (_bad(outputs={"o": {"value": {"foo_function": 1, "x": {"Fn::Sub": "x"}}}}),
     "outputs.o.value.x.Fn::Sub", "unknown function 'Fn::Sub'"),
    (_bad(resources={"a": {"type": "OS::Heat::None", "properties": {
        "p": {"str_split": [",", "a,b"]}}}}, version="2015-04-30"),
     "resources.a.properties.p.str_split",
     "needs heat_template_version 2015-10-15 or later; this template is 2015-04-30"),
    (_bad(conditions={"off": False}, resources={
        "a": {"type": "OS::Heat::None", "condition": "off"},
        "b": {"type": "OS::Heat::None", "properties": {"p": {"get_resource": "a"}}}}),
     "resources.b.properties.p", "its condition 'off' is false"),
    (_bad(resources={"a": {"type": "OS::Heat::None", "properties": {
        "p": {"yaql": {"expression": "range(500).toList()"}}}}}),
     "resources.a.properties.p.yaql", "Collection length exceeds 200"),
    (_bad(conditions={"c": {"not": "d"}, "d": {"not": "c"}},
          resources={"a": {"type": "OS::Heat::None", "condition": "c"}}),
     "conditions.", "circular definition"),
    (_bad(resources={"a": {"type": "OS::Heat::None", "condition": "nope"}}, conditions={}),
     "resources.a.condition", "invalid condition 'nope'"),
    (_bad(conditions={"c": {"get_resource": "a"}}),
     "conditions.c.get_resource", "not allowed in a condition"),
])
def test_refused_templates_name_the_path_and_store_nothing(
        sqlite_engine, stack_name, tmpl, path, fragment):
    before = testing.stored_rows(sqlite_engine)
    with pytest.raises(exceptions.StackValidationFailed) as info:
        sqlite_engine.create_stack(stack_name, tmpl)
    assert info.value.path.startswith(path), info.value
    assert fragment in info.value.reason
    assert testing.stored_rows(sqlite_engine) == before


def test_guarded_reference_and_depends_on_a_disabled_resource_are_accepted(
        sqlite_engine, stack_name):
    tmpl = _bad(conditions={"off": False}, resources={
        "a": {"type": "OS::Heat::None", "condition": "off"},
        "b": {"type": "OS::Heat::TestResource", "depends_on": "a",
              "properties": {"value": {"if": ["off", {"get_resource": "a"}, "fallback"]}}}},
        outputs={"b": {"value": {"get_attr": ["b", "output"]}}})
    stack = settle(sqlite_engine, sqlite_engine.create_stack(stack_name, tmpl))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs["b"] == "fallback"


def test_attributes_heat_answers_with_null(sqlite_engine, stack_name):
    """A template resource whose child dropped an output the parent reads
    yields None (Heat: TemplateResource answers any attribute); a
    ResourceGroup of count 0 does not validate a member that does not exist."""
    child = {"heat_template_version": "2016-10-14",
             "resources": {"n": {"type": "OS::Heat::None"}},
             "outputs": {"kept": {"value": "here"}}}
    tmpl = {"heat_template_version": "2016-10-14",
            "resources": {
                "tr": {"type": "child.yaml"},
                "group": {"type": "OS::Heat::ResourceGroup", "properties": {
                    "count": 0, "resource_def": {"type": "missing.yaml"}}}},
            "outputs": {"kept": {"value": {"get_attr": ["tr", "kept"]}},
                        "gone": {"value": {"get_attr": ["tr", "dropped"]}}}}
    stack = settle(sqlite_engine, sqlite_engine.create_stack(
        stack_name, tmpl, files={"child.yaml": json.dumps(child)}))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs == {"kept": "here", "gone": None}
    assert stack.output_errors == {}  # None is the attribute's value, not an error


def test_output_that_fails_is_none_with_an_error(sqlite_engine, stack_name):
    """Heat: an output whose value cannot be resolved shows null and an
    output_error; the stack completes (heat/engine/output.py, stack outputs)."""
    tmpl = {"heat_template_version": "2016-10-14",
            "parameters": {"csv": {"type": "string", "default": "a,b"}},
            "resources": {"r": {"type": "OS::Heat::TestResource",
                                "properties": {"value": "x"}}},
            "outputs": {"ok": {"value": {"get_attr": ["r", "output"]}},
                        "bad": {"value": {"str_split": [",", {"get_param": "csv"}, 5]}}}}
    stack = settle(sqlite_engine, sqlite_engine.create_stack(stack_name, tmpl))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs == {"ok": "x", "bad": None}
    assert stack.output_errors == {
        "bad": "outputs.bad.str_split: index 5 is not between 0 and 1"}
    assert sqlite_engine.get_stack(stack.id).output_errors == stack.output_errors


def test_resource_facade_reads_the_parent_resource(sqlite_engine, stack_name):
    """heat/engine/hot/functions.py ResourceFacade: metadata, deletion_policy
    and update_policy of the resource that owns the nested stack."""
    child = {"heat_template_version": "2016-10-14",
             "resources": {"n": {"type": "OS::Heat::None"}},
             "outputs": {"meta": {"value": {"resource_facade": "metadata"}},
                         "policy": {"value": {"resource_facade": "deletion_policy"}}}}
    tmpl = {"heat_template_version": "2016-10-14",
            "parameters": {"tier": {"type": "string", "default": "web"}},
            "resources": {"tr": {"type": "child.yaml", "deletion_policy": "retain",
                                 "metadata": {"tier": {"get_param": "tier"}}}},
            "outputs": {"meta": {"value": {"get_attr": ["tr", "meta"]}},
                        "policy": {"value": {"get_attr": ["tr", "policy"]}}}}
    stack = settle(sqlite_engine, sqlite_engine.create_stack(
        stack_name, tmpl, files={"child.yaml": json.dumps(child)}))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs == {"meta": {"tier": "web"}, "policy": "Retain"}
    top = {"heat_template_version": "2016-10-14",
           "resources": {"n": {"type": "OS::Heat::None"}},
           "outputs": {"meta": {"value": {"resource_facade": "metadata"}}}}
    alone = settle(sqlite_engine, sqlite_engine.create_stack(stack_name + "-top", top))
    assert alone.status == "COMPLETE" and alone.outputs == {"meta": None}


def test_snapshot_deletion_policy_as_heat(sqlite_engine, stack_name):
    """Heat: Snapshot needs a type with a snapshot delete
    (Resource.validate_deletion_policy); OS::Heat::None is never validated
    (NoneResource.validate), so a cloud type mapped to it keeps the policy."""
    tmpl = {"heat_template_version": "2016-10-14",
            "resources": {"v": {"type": "OS::Cinder::Volume", "deletion_policy": "snapshot"}}}
    env = {"resource_registry": {"OS::Cinder::Volume": "OS::Heat::None"}}
    stack = settle(sqlite_engine, sqlite_engine.create_stack(stack_name, tmpl, environment=env))
    assert stack.status == "COMPLETE", stack.status_reason
    assert settle(sqlite_engine, sqlite_engine.delete_stack(stack.id)).status == "COMPLETE"
    tmpl["resources"]["v"]["type"] = "OS::Heat::TestResource"
    with pytest.raises(exceptions.StackValidationFailed,
                       match="Snapshot is not supported by OS::Heat::TestResource"):
        sqlite_engine.create_stack(stack_name + "-t", tmpl)
