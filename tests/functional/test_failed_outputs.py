"""A stack that failed still lists its outputs, as Heat's show does for any
stack but a deleted one (heat/engine/api.py ``format_stack``: outputs for
every state but DELETE_COMPLETE; ``format_stack_output``: a value that
cannot be resolved is None, with its ``output_error``). Values come from
the resources as they stand: a completed resource's, None for one that
failed or was never made."""

import pytest

TR = "OS::Heat::TestResource"


def _template(fail=True):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": {"type": TR, "properties": {"value": "x"}},
            "b": {"type": TR, "depends_on": ["a"], "properties": {"fail": fail}},
            "c": {"type": TR, "depends_on": ["b"], "properties": {"value": "never"}},
            "group": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": 2, "resource_def": {"type": TR, "properties": {"value": "m"}}}},
        },
        "outputs": {
            "a_out": {"value": {"get_attr": ["a", "output"]}},
            "a_ref": {"value": {"get_resource": "a"}},
            "b_out": {"value": {"get_attr": ["b", "output"]}},
            "c_out": {"value": {"get_attr": ["c", "output"]}},
            "joined": {"value": {"list_join": [",", [{"get_attr": ["a", "output"]},
                                                     {"get_attr": ["c", "output"]}]]}},
            "hosts": {"value": {"get_attr": ["group", "outputs", "host"]}},
            "refs": {"value": {"get_attr": ["group", "refs"]}},
        },
    }


def test_a_failed_create_lists_its_outputs(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _template(),
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    outputs = stack.outputs
    assert set(outputs) == set(_template()["outputs"])
    assert outputs["a_out"] == "x"
    a = {r.name: r for r in engine.list_resources(stack.id)}["a"]
    assert outputs["a_ref"] == a.physical_id
    assert outputs["b_out"] is None and outputs["c_out"] is None
    assert len(outputs["refs"]) == 2
    # Heat: "The Referenced Attribute (0 outputs) is incorrect."
    assert outputs["hosts"] is None
    assert stack.output_errors["hosts"] == "The Referenced Attribute (0 outputs) is incorrect."


def test_the_group_attribute_error_is_heats_on_a_complete_stack_too(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _template(fail=False)).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs["hosts"] is None
    assert stack.output_errors["hosts"] == "The Referenced Attribute (0 outputs) is incorrect."
    assert stack.outputs["c_out"] == "never"


@pytest.mark.parametrize("rollback", [True, False])
def test_a_failed_update_lists_its_outputs(engine, stack_name, rollback):
    stack = engine.wait(engine.create_stack(stack_name, _template(fail=False),
                                            disable_rollback=not rollback).id, timeout=60)
    changed = _template()
    changed["resources"]["a"]["properties"]["value"] = "y"
    stack = engine.wait(engine.update_stack(stack.id, changed).id, timeout=60)
    if rollback:
        assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
        assert stack.outputs["a_out"] == "x"
    else:
        assert stack.stack_status == "UPDATE_FAILED"
        assert stack.outputs["a_out"] == "y"
    assert set(stack.outputs) == set(changed["outputs"])
