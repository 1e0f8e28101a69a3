"""An update applies what a nested stack is built from beyond its
properties: the files its template reads (``get_file`` inside a nested
template) and the environment it inherits (``parameter_defaults``).

Heat always updates a nested stack and lets its resources decide
(heat/engine/resources/stack_resource.py ``StackResource._needs_update``:
"Always issue an update to the nested stack and let the individual
resources in it decide if they need updating"), so a changed file or
default reaches every existing child -- template resources,
``OS::Heat::Stack``, every member of a ``ResourceGroup`` and of a
``ResourceChain`` alike.
"""

import yaml

TR = "OS::Heat::TestResource"

CHILD = yaml.safe_dump({
    "heat_template_version": "2018-08-31",
    "parameters": {"size": {"type": "string", "default": "none"}},
    "resources": {"inner": {"type": TR, "properties": {
        "value": {"list_join": ["/", [{"get_file": "script.sh"}, {"get_param": "size"}]]}}}},
    "outputs": {"out": {"value": {"get_attr": ["inner", "output"]}}},
})


def _parent():
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "tres": {"type": "child.yaml"},
            "stack": {"type": "OS::Heat::Stack",
                      "properties": {"template": {"get_file": "child.yaml"}}},
            "group": {"type": "OS::Heat::ResourceGroup", "properties": {
                "count": 2, "resource_def": {"type": "child.yaml"}}},
            "chain": {"type": "OS::Heat::ResourceChain",
                      "properties": {"resources": ["child.yaml"]}},
        },
        "outputs": {
            "tres": {"value": {"get_attr": ["tres", "out"]}},
            "stack": {"value": {"get_attr": ["stack", "outputs", "out"]}},
            "group": {"value": {"get_attr": ["group", "out"]}},
            "chain": {"value": {"get_attr": ["chain", "resource.0.out"]}},
        },
    }


def _files(script):
    return {"child.yaml": CHILD, "script.sh": script}


def _env(size):
    return {"parameter_defaults": {"size": size}}


def test_changed_nested_files_and_defaults_reach_every_child(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _parent(), files=_files("v1"),
                                            environment=_env("s")).id, timeout=120)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"tres": "v1/s", "stack": "v1/s", "group": ["v1/s", "v1/s"],
                             "chain": "v1/s"}

    stack = engine.wait(engine.update_stack(stack.id, _parent(), files=_files("v2"),
                                            environment=_env("s")).id, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"tres": "v2/s", "stack": "v2/s", "group": ["v2/s", "v2/s"],
                             "chain": "v2/s"}

    grown = _parent()
    grown["resources"]["group"]["properties"]["count"] = 3
    stack = engine.wait(engine.update_stack(stack.id, grown, files=_files("v2"),
                                            environment=_env("m")).id, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"tres": "v2/m", "stack": "v2/m", "group": ["v2/m"] * 3,
                             "chain": "v2/m"}
    # Every nested resource holds the new value, not only the outputs.
    values = {(r.stack_name, r.name): r.properties.get("value")
              for r in engine.list_resources(stack.id, nested_depth=3) if r.name == "inner"}
    assert len(values) == 6 and set(values.values()) == {"v2/m"}

    # Nothing changed: no child is touched again.
    before = {r.stack_id: r.updated_at for r in engine.list_resources(stack.id, nested_depth=3)
              if r.name == "inner"}
    stack = engine.wait(engine.update_stack(stack.id, grown, files=_files("v2"),
                                            environment=_env("m")).id, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    after = {r.stack_id: r.updated_at for r in engine.list_resources(stack.id, nested_depth=3)
             if r.name == "inner"}
    assert after == before
