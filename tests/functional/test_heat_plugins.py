"""Heat 27.0.1's own service-free plugin files, unedited, loaded through
``[heat_compat] plugin_dirs`` and run through their lifecycle: create,
update in place (where the type has one), update that replaces, a failed
create rolled back, delete. The expected values are those of Heat's own
unit tests (heat/tests/openstack/heat/test_*.py), cited per test.

Each runs on SQLite, PostgreSQL and MariaDB. The registry holds no entry
points (``ResourceRegistry.for_testing({})``): every type here is the class
Heat's file maps, whatever native types the installed nestedflow also has.
A failed create adds Heat's ``OS::Heat::TestResource`` with ``fail: true``.
"""

import json
import re
import time

import pytest

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.resources.registry import ResourceRegistry
from tests.functional import heat_plugin_files

FAILING = {"type": "OS::Heat::TestResource", "depends_on": [],
           "properties": {"fail": True, "value": "doomed"}}


@pytest.fixture
def plugin_dir(tmp_path):
    return heat_plugin_files.copy_plugins(tmp_path / "plugins",
                                          heat_plugin_files.SERVICE_FREE)


@pytest.fixture
def engine(make_engine, db_url, plugin_dir):
    CONF.set_override("plugin_dirs", [str(plugin_dir)], group="heat_compat")
    CONF.set_override("poll_interval", 0.05, group="heat_compat")
    CONF.set_override("max_poll_interval", 0.5, group="heat_compat")
    yield make_engine(db_url, registry=ResourceRegistry.for_testing({}), max_workers=8)
    for option in ("plugin_dirs", "poll_interval", "max_poll_interval"):
        CONF.clear_override(option, group="heat_compat")


def _tmpl(resources, outputs=None, parameters=None):
    return {"heat_template_version": "2016-10-14", "parameters": parameters or {},
            "resources": resources, "outputs": outputs or {}}


def _run(engine, stack_id, expected):
    stack = engine.wait(stack_id, timeout=120)
    assert (stack.action, stack.status) == tuple(expected.split("_", 1)), stack.status_reason
    return stack


def _create(engine, name, template, **kwargs):
    stack = engine.create_stack(name, template, **kwargs)
    return _run(engine, stack.id, "CREATE_COMPLETE")


def _update(engine, stack, template, **kwargs):
    engine.update_stack(stack.id, template, **kwargs)
    return _run(engine, stack.id, "UPDATE_COMPLETE")


def _resources(engine, stack):
    return {r.name: r for r in engine.list_resources(stack.id)}


def _creates(engine, stack, name):
    """How many times resource ``name`` was created (2: it was replaced)."""
    return sum(1 for e in engine.list_events(stack.id)
               if e.resource_name == name and (e.action, e.status) == ("CREATE", "COMPLETE"))


def _rolled_back(engine, name, resources):
    """A create that fails on the TestResource and rolls back; every other
    resource of ``resources`` was created, then deleted."""
    stack = engine.create_stack(name, _tmpl({**resources, "failing": FAILING}))
    _run(engine, stack.id, "ROLLBACK_COMPLETE")
    events = [(e.resource_name, e.action, e.status) for e in engine.list_events(stack.id)]
    assert ("failing", "CREATE", "FAILED") in events
    for resource in resources:
        assert (resource, "CREATE", "COMPLETE") in events
        assert (resource, "DELETE", "COMPLETE") in events
    return stack


def _deleted(engine, stack):
    engine.delete_stack(stack.id)
    _run(engine, stack.id, "DELETE_COMPLETE")


def test_none(engine, stack_name):
    """heat/tests/openstack/heat/test_none_resource.py: any property is
    taken, any attribute is None (test_none_stack_create), adding or
    removing a property keeps the resource (test_none_stack_update_add_prop,
    _del_prop)."""
    template = _tmpl({"none": {"type": "OS::Heat::None", "properties": {"ignored": "foo"}}},
                     {"anything": {"value": {"get_attr": ["none", "anything"]}},
                      "ref": {"value": {"get_resource": "none"}}})
    stack = _create(engine, stack_name, template)
    assert stack.outputs["anything"] is None
    ref = stack.outputs["ref"]
    assert re.fullmatch(r"[0-9a-f-]{36}", ref)  # handle_create: a uuid4

    template["resources"]["none"]["properties"]["another"] = 123
    assert _update(engine, stack, template).outputs["ref"] == ref
    del template["resources"]["none"]["properties"]["ignored"]
    assert _update(engine, stack, template).outputs["ref"] == ref
    assert _creates(engine, stack, "none") == 1

    # Replaced: marked unhealthy, the next update makes a new one.
    engine.mark_resource_unhealthy(stack.id, "none", resource_status_reason="test")
    replaced = _update(engine, stack, template)
    assert replaced.outputs["ref"] != ref and _creates(engine, stack, "none") == 2

    _rolled_back(engine, f"{stack_name}-rb", {"none": {"type": "OS::Heat::None",
                                                       "properties": {"x": 1}}})
    _deleted(engine, stack)


VALUE_TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "parameters": {"param1": {"type": "string"}},
    "resources": {
        "my_value": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "param1"}}},
        "my_value2": {"type": "OS::Heat::Value",
                      "properties": {"value": {"get_attr": ["my_value", "value"]}}},
    },
    "outputs": {"myout": {"value": {"get_attr": ["my_value2", "value"]}},
                "ref": {"value": {"get_resource": "my_value2"}}},
}


def _value_template(param_type, strict):
    template = json.loads(json.dumps(VALUE_TEMPLATE))
    template["parameters"]["param1"]["type"] = param_type
    if strict:
        for resource in template["resources"].values():
            resource["properties"]["type"] = param_type
    return template


@pytest.mark.parametrize("param_type,param1", [
    # heat/tests/openstack/heat/test_value.py TestValueSimple's scenarios.
    ("boolean", True), ("comma_delimited_list", ["a", "b", "Z"]),
    ("json", {"a": "Z", "B": "y"}), ("number", -11), ("number", 100.999),
    ("string", "Perchance to dream"),
])
def test_value_types(engine, stack_name, param_type, param1):
    """TestValueSimple.test_value: the value comes out as it went in, with
    and without ``type`` (strict and loose templates)."""
    for strict in (True, False):
        stack = _create(engine, f"{stack_name}-{strict}", _value_template(param_type, strict),
                        parameters={"param1": param1})
        assert stack.outputs["myout"] == param1


def test_value_lifecycle(engine, stack_name):
    """TestValueUpdate 'number-to-string' (-77 -> 'mellors'): updated in
    place, the resources are not replaced."""
    stack = _create(engine, stack_name, _value_template("number", True),
                    parameters={"param1": -77})
    assert stack.outputs["myout"] == -77
    ref = stack.outputs["ref"]
    updated = _update(engine, stack, _value_template("string", True),
                      parameters={"param1": "mellors"})
    assert updated.outputs["myout"] == "mellors"
    assert updated.outputs["ref"] == ref  # physical_resource_name of the same resource
    assert _creates(engine, stack, "my_value2") == 1

    engine.mark_resource_unhealthy(stack.id, "my_value2", resource_status_reason="test")
    replaced = _update(engine, stack, _value_template("string", True),
                       parameters={"param1": "mellors"})
    assert replaced.outputs["ref"] != ref and replaced.outputs["myout"] == "mellors"

    _rolled_back(engine, f"{stack_name}-rb", {"v": {"type": "OS::Heat::Value",
                                                    "properties": {"value": 1}}})
    _deleted(engine, stack)


def test_value_reparse_refuses_a_value_of_the_wrong_type(engine, stack_name):
    """TestValueLessSimple.test_validation_fail: Value's reparse() gives
    ``value`` the schema of ``type: number``; a JSON value is refused before
    anything is stored."""
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"param1": {"type": "json"}},
                "resources": {"my_value": {"type": "OS::Heat::Value", "properties": {
                    "value": {"get_param": "param1"}, "type": "number"}}}}
    with pytest.raises(exceptions.StackValidationFailed,
                       match=r"resources\.my_value\.properties\.value: expected number"):
        engine.create_stack(stack_name, template,
                            parameters={"param1": json.dumps({"one": "croissant"})})
    assert not [s for s in engine.list_stacks() if s.name == stack_name]
    # The same value with type json is created.
    template["resources"]["my_value"]["properties"]["type"] = "json"
    _create(engine, stack_name, template, parameters={"param1": {"one": "croissant"}})


def _secret(properties=None):
    return {"type": "OS::Heat::RandomString", "properties": properties or {}}


def _count(pattern, text):
    return len(re.findall(pattern, text))


def test_random_string(engine, stack_name):
    """heat/tests/openstack/heat/test_random_string.py test_random_string:
    secret1 is 32 letters and digits, secret5 (length 10) has at least 1 of
    ``(),[]{}``, 2 of ``$_``, 5 ``@``; the reference id is the value."""
    sequences = [{"sequence": "(),[]{}", "min": 1}, {"sequence": "$_", "min": 2},
                 {"sequence": "@", "min": 5}]
    template = _tmpl({"secret1": _secret(),
                      "secret5": _secret({"length": 10, "character_sequences": sequences})},
                     {name: {"value": {"get_attr": [name, "value"]}}
                      for name in ("secret1", "secret5")}
                     | {"ref1": {"value": {"get_resource": "secret1"}}})
    stack = _create(engine, stack_name, template)
    secret1, secret5 = stack.outputs["secret1"], stack.outputs["secret5"]
    assert len(secret1) == 32 and _count("[a-zA-Z0-9]", secret1) == 32
    assert stack.outputs["ref1"] == secret1
    assert len(secret5) == 10
    assert _count(r"[(),\[\]{}]", secret5) >= 1 and _count("[$_]", secret5) >= 2
    assert _count("@", secret5) >= 5

    # Nothing changed for secret1: kept; salt changed: replaced, new string
    # (salt is not update_allowed and RandomString has no handle_update).
    template["resources"]["other"] = _secret({"length": 8})
    kept = _update(engine, stack, template)
    assert kept.outputs["secret1"] == secret1
    template["resources"]["secret1"]["properties"]["salt"] = "again"
    replaced = _update(engine, stack, template)
    assert replaced.outputs["secret1"] != secret1 and len(replaced.outputs["secret1"]) == 32
    assert _creates(engine, stack, "secret1") == 2

    _rolled_back(engine, f"{stack_name}-rb", {"s": _secret()})
    _deleted(engine, stack)


def test_random_string_translation_rule(engine, stack_name):
    """test_hidden_sequence_property: RandomString's translation_rules()
    turn the hidden ``sequence: octdigits`` into ``character_classes:
    [{class: octdigits, min: 1}]`` and drop ``sequence``: 100 octal digits."""
    template = _tmpl({"secret": _secret({"length": 100, "sequence": "octdigits"})},
                     {"value": {"value": {"get_attr": ["secret", "value"]}}})
    stack = _create(engine, stack_name, template)
    assert _count("[0-7]", stack.outputs["value"]) == 100
    stored = _resources(engine, stack)["secret"].properties
    assert stored["character_classes"] == [{"class": "octdigits", "min": 1}]
    assert stored["sequence"] is None


def test_random_string_validate(engine, stack_name):
    """test_invalid_length: RandomString.validate() refuses a length
    shorter than the minimums, with Heat's message."""
    template = _tmpl({"secret": _secret({
        "length": 5, "character_classes": [{"class": "digits", "min": 5}],
        "character_sequences": [{"sequence": "(),[]{}", "min": 1}]})})
    with pytest.raises(exceptions.StackValidationFailed) as raised:
        engine.create_stack(stack_name, template)
    assert str(raised.value) == ("resources.secret: Length property cannot be smaller than "
                                 "combined character class and character sequence minimums")
    template["resources"]["secret"]["properties"]["length"] = 6
    _create(engine, stack_name, template)


def _test_resource(**properties):
    return {"type": "OS::Heat::TestResource", "properties": properties}


def test_test_resource(engine, stack_name):
    """heat_integrationtests/functional/test_create_update.py (Heat's own
    functional tests of OS::Heat::TestResource): test_stack_in_place_update
    ('test_in_place' -> 'test_in_place_update' keeps the physical id),
    test_stack_update_replace (``update_replace: true`` with a new value
    replaces, through needs_replace_with_prop_diff), test_create_rollback
    (``fail: true`` -> ROLLBACK_COMPLETE). ``output`` is the stored value."""
    template = _tmpl({"test1": _test_resource(value="test_in_place",
                                              action_wait_secs={"create": 1})},
                     {"output": {"value": {"get_attr": ["test1", "output"]}},
                      "ref": {"value": {"get_resource": "test1"}}})
    stack = _create(engine, stack_name, template)
    assert stack.outputs["output"] == "test_in_place"
    ref = stack.outputs["ref"]
    assert ref.startswith(f"{stack_name}-test1-")  # physical_resource_name()

    template["resources"]["test1"]["properties"]["value"] = "test_in_place_update"
    updated = _update(engine, stack, template)
    assert (updated.outputs["output"], updated.outputs["ref"]) == ("test_in_place_update", ref)

    template["resources"]["test1"]["properties"].update(value="test_replace",
                                                        update_replace=True)
    replaced = _update(engine, stack, template)
    assert replaced.outputs["output"] == "test_replace" and replaced.outputs["ref"] != ref
    assert _creates(engine, stack, "test1") == 2

    rolled = engine.create_stack(f"{stack_name}-rb", _tmpl({"test1": _test_resource(
        fail=True, value="test_create_rollback")}))
    _run(engine, rolled.id, "ROLLBACK_COMPLETE")
    reasons = [e.status_reason for e in engine.list_events(rolled.id)
               if (e.resource_name, e.action, e.status) == ("test1", "CREATE", "FAILED")]
    assert "Test Resource failed test1" in reasons[0]
    _rolled_back(engine, f"{stack_name}-rb2", {"ok": _test_resource(value="x")})
    _deleted(engine, stack)


def _delay(**properties):
    return {"type": "OS::Heat::Delay", "properties": properties}


DELAYS = {  # heat/tests/openstack/heat/test_delay.py simple_template
    "constant": _delay(min_wait=3),
    "variable": _delay(min_wait=1.6, max_jitter=4.2, actions=["CREATE", "DELETE"]),
    "variable_prod": _delay(min_wait=2, max_jitter=666, jitter_multiplier=0.1,
                            actions=["DELETE"]),
}


def test_delay_validate(engine, stack_name):
    """TestDelay.test_validate_success / test_validate_failure: with a
    1-minute timeout, variable_prod's 2 + 666 * 0.1 = 68.6 s exceeds it."""
    template = _tmpl(dict(DELAYS))
    with pytest.raises(exceptions.StackValidationFailed,
                       match=r"resources\.variable_prod: .*maximum delay 68\.6"):
        engine.create_stack(stack_name, template, timeout=1)
    assert not [s for s in engine.list_stacks() if s.name == stack_name]
    # No timeout (Heat's default is an hour; nestedflow has none): valid.
    created = engine.create_stack(stack_name, _tmpl({"variable_prod": DELAYS["variable_prod"]}))
    _run(engine, created.id, "CREATE_COMPLETE")


def test_delay(engine, stack_name):
    """Delay waits min_wait on create (4.2 s: its check_create_complete
    raises resource.PollDelay while 4 s or more remain, see
    DelayCompletionTest.test_incomplete_moderate_delay); a changed min_wait
    replaces it (no handle_update: Heat's default handle_update)."""
    template = _tmpl({"delay": _delay(min_wait=4.2)})
    started = time.monotonic()
    stack = _create(engine, stack_name, template)
    assert time.monotonic() - started >= 4.2
    template["resources"]["delay"]["properties"]["min_wait"] = 0.5
    _update(engine, stack, template)
    assert _creates(engine, stack, "delay") == 2
    _rolled_back(engine, f"{stack_name}-rb", {"d": _delay(min_wait=0)})
    _deleted(engine, stack)


def test_access_policy(engine, stack_name):
    """AccessPolicy.validate(): every AllowedResources name must be in the
    stack (heat/tests/aws/test_user.py AccessPolicyTest.
    test_accesspolicy_create_err_notfound); AllowedResources is not
    update_allowed: a change replaces."""
    resources = {"web": {"type": "OS::Heat::None"},
                 "policy": {"type": "OS::Heat::AccessPolicy",
                            "properties": {"AllowedResources": ["NoExistResource"]}}}
    with pytest.raises(exceptions.StackValidationFailed,
                       match="resources.policy: AccessPolicy resource NoExistResource not in "
                             "stack"):
        engine.create_stack(stack_name, _tmpl(resources))
    resources["policy"]["properties"]["AllowedResources"] = ["web"]
    stack = _create(engine, stack_name, _tmpl(resources))
    resources["other"] = {"type": "OS::Heat::None"}
    resources["policy"]["properties"]["AllowedResources"] = ["web", "other"]
    _update(engine, stack, _tmpl(resources))
    assert _creates(engine, stack, "policy") == 2
    _rolled_back(engine, f"{stack_name}-rb", {
        "policy": {"type": "OS::Heat::AccessPolicy", "properties": {"AllowedResources": []}}})
    _deleted(engine, stack)


@pytest.mark.parametrize("type_name", ["OS::Heat::HARestarter", "OS::Designate::Domain"])
def test_placeholders_built_on_none_resource(engine, stack_name, type_name):
    """Heat's removed types subclass heat.engine.resources.openstack.heat.
    none_resource.NoneResource (served by the adapter): any property, any
    attribute None, never updated; replaced when marked unhealthy."""
    template = _tmpl({"gone": {"type": type_name, "properties": {"InstanceId": "abc"}}},
                     {"attr": {"value": {"get_attr": ["gone", "AlarmUrl"]}},
                      "ref": {"value": {"get_resource": "gone"}}})
    stack = _create(engine, stack_name, template)
    assert stack.outputs["attr"] is None
    template["resources"]["gone"]["properties"]["InstanceId"] = "def"
    assert _update(engine, stack, template).outputs["ref"] == stack.outputs["ref"]
    engine.mark_resource_unhealthy(stack.id, "gone", resource_status_reason="test")
    assert _update(engine, stack, template).outputs["ref"] != stack.outputs["ref"]
    _rolled_back(engine, f"{stack_name}-rb", {"gone": {"type": type_name}})
    _deleted(engine, stack)
