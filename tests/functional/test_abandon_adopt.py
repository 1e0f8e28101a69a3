"""Abandon then adopt gives back the same physical objects, none created.

Heat's abandon data (heat/engine/stack.py ``prepare_abandon``,
heat/engine/resource.py ``prepare_abandon``/``handle_adopt``).
"""

import json

import pytest
import yaml

from nestedflow import exceptions
from nestedflow.testing import physical_objects

TR = "OS::Heat::TestResource"
CHILD = yaml.safe_dump({
    "heat_template_version": "2018-08-31",
    "parameters": {"v": {"type": "string"}},
    "resources": {"inner": {"type": TR, "properties": {"value": {"get_param": "v"}}}},
    "outputs": {"out": {"value": {"get_attr": ["inner", "output"]}}},
})
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"p": {"type": "string", "default": "x"}},
    "resources": {
        "a": {"type": TR, "properties": {"value": {"get_param": "p"}},
              "metadata": {"role": "db"}},
        "b": {"type": TR, "properties": {"value": {"get_resource": "a"}}},
        "word": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
        "child": {"type": "child.yaml", "properties": {"v": {"get_attr": ["a", "output"]}}},
    },
    "outputs": {"word": {"value": {"get_attr": ["word", "value"]}},
                "nested": {"value": {"get_attr": ["child", "out"]}}},
}
ENVIRONMENT = {"parameter_defaults": {"p": "from-env"}}


def live_ids(engine, baseline=frozenset()):
    """Live physical objects other tests (sharing the database) did not make."""
    return sorted(o.id for o in physical_objects(engine) if o.id not in baseline)


def test_stored_template_environment_and_files(engine, stack_name):
    files = {"child.yaml": CHILD}
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE, {"p": "given"}, files,
                                            ENVIRONMENT).id, timeout=60)
    assert engine.get_template(stack.id) == TEMPLATE
    assert engine.get_files(stack.id) == files
    env = engine.get_environment(stack.id)
    assert env["parameters"] == {"p": "given"}
    assert env["parameter_defaults"] == {"p": "from-env"}
    assert env["resource_registry"] == {}
    # An --existing update keeps them: the same objects, nothing changes.
    engine.wait(engine.update_stack(stack.id, None, existing=True).id, timeout=60)
    assert engine.get_files(stack.id) == files
    assert engine.get_template(stack.id) == TEMPLATE


def test_abandon_then_adopt_takes_the_same_objects_back(engine, stack_name):
    files = {"child.yaml": CHILD}
    others = frozenset(live_ids(engine))
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE, {"p": "v1"}, files,
                                            ENVIRONMENT).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    before = {r.name: r.physical_id for r in engine.list_resources(stack.id)
              if r.name != "child"}
    objects = live_ids(engine, others)
    assert len(objects) == 4  # a, b, word and the child stack's inner
    inner = [o.id for o in physical_objects(engine, None) if o.resource_name == "inner"
             and o.id in objects]

    exported = engine.abandon_stack(stack.id, abandon=False)
    assert engine.get_stack(stack.id).stack_status == "CREATE_COMPLETE"
    data = engine.abandon_stack(stack.id)
    assert exported == data
    # Heat's abandon data.
    assert {"name", "id", "action", "status", "template", "environment", "files",
            "resources", "project_id", "stack_user_project_id", "tags"} <= set(data)
    assert data["resources"]["a"]["metadata"] == {"role": "db"}
    assert data["resources"]["a"]["resource_id"] == before["a"]
    assert data["resources"]["child"]["resources"]["inner"]["resource_id"] == inner[0]
    # Gone from nestedflow; its physical objects stay.
    assert stack.id not in {s.id for s in engine.list_stacks()}
    with pytest.raises(exceptions.StackNotFound):
        engine.get_template(stack.id)
    assert live_ids(engine, others) == objects

    # Adopt from the data as a client sends it (JSON text); no template given.
    adopted = engine.wait(engine.create_stack(f"{stack_name}-2", None,
                                              adopt_stack_data=json.dumps(data)).id,
                          timeout=60)
    # Heat's adopt is its own action (heat/engine/stack.py Stack.adopt:
    # stack_task(action=ADOPT)), nested stacks included.
    assert adopted.stack_status == "ADOPT_COMPLETE", adopted.status_reason
    assert adopted.status_reason == "Stack ADOPT completed successfully"
    assert [(e.action, e.status) for e in engine.list_events(adopted.id)
            if e.resource_name == adopted.name] == [("ADOPT", "IN_PROGRESS"),
                                                    ("ADOPT", "COMPLETE")]
    (child,) = [s for s in engine.list_stacks(show_nested=True) if s.parent_id == adopted.id]
    assert child.stack_status == "ADOPT_COMPLETE", child.status_reason
    after = {r.name: r.physical_id for r in engine.list_resources(adopted.id)
             if r.name != "child"}
    assert after == before
    assert live_ids(engine, others) == objects, "adopt created physical objects"
    assert adopted.outputs["word"] == stack.outputs["word"]
    assert adopted.outputs["nested"] == "v1"
    # The adopted stack owns them now: an update acts on them, a delete deletes them.
    engine.wait(engine.update_stack(adopted.id, None, {"p": "v2"}, existing=True).id,
                timeout=60)
    assert live_ids(engine, others) == objects
    engine.wait(engine.delete_stack(adopted.id).id, timeout=60)
    assert live_ids(engine, others) == []


def test_adopting_an_object_that_is_gone_fails_clearly(sqlite_engine, stack_name):
    engine = sqlite_engine
    template = {"heat_template_version": "2018-08-31", "resources": {"a": {"type": TR}}}
    data = {"template": template,
            "resources": {"a": {"name": "a", "type": TR, "resource_id": "no-such-object"}}}
    stack = engine.wait(engine.create_stack(stack_name, None, adopt_stack_data=data,
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "ADOPT_FAILED"  # Heat's Stack.adopt, without rollback
    assert "no-such-object" in stack.status_reason
    with pytest.raises(exceptions.StackValidationFailed, match="adopt_stack_data"):
        engine.create_stack(f"{stack_name}-x", None, adopt_stack_data=["nope"])
