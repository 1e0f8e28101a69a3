"""Create, rollback, delete on real databases (SQLite file, PostgreSQL, MariaDB)."""

import collections

import pytest

from nestedflow import exceptions, testing
from nestedflow.db import models


def live(engine, stack_id):
    return testing.physical_objects(engine, stack_id)


def settle(engine, stack, timeout=120):
    return engine.wait(stack.id, timeout=timeout)


def diamond_template(layers=6, width=8):
    """A root, ``layers`` layers of ``width`` resources, each needing the whole
    previous layer, and a sink: 2 + layers * width resources."""
    resources = {"root": {"type": "OS::Heat::TestResource",
                          "properties": {"value": "root"}}}
    previous = ["root"]
    for layer in range(layers):
        current = []
        for i in range(width):
            name = f"r{layer}_{i}"
            resources[name] = {
                "type": "OS::Heat::TestResource",
                "properties": {
                    "value": {"list_join": ["-", [{"get_attr": [p, "output"]} for p in previous]]}
                    if layer == 0 else {"get_attr": [previous[i], "output"]},
                    "wait_secs": 0.2,
                },
                "depends_on": previous,
            }
            current.append(name)
        previous = current
    resources["sink"] = {"type": "OS::Heat::None", "depends_on": previous}
    return {"heat_template_version": "2018-08-31", "resources": resources,
            "outputs": {"first": {"value": {"get_attr": ["r0_0", "output"]}}}}


def action_spans(engine, stack_id, action="CREATE"):
    """resource name -> (start, end) from the recorded events."""
    starts, ends = {}, {}
    for event in engine.db.list_events(stack_id):
        # The stack's own events (its "started" and settled ones) are not a resource's.
        if event.action != action or event.resource_name is None:
            continue
        if event.status == "IN_PROGRESS":
            starts[event.resource_name] = event.timestamp
        elif event.status == "COMPLETE":
            ends[event.resource_name] = event.timestamp
    return {name: (starts[name], ends[name]) for name in ends if name in starts}


def max_concurrency(spans):
    """Most intervals open at one instant (ends sort before starts at ties)."""
    points = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans],
                    key=lambda p: (p[0], p[1]))
    best = running = 0
    for _, step in points:
        running += step
        best = max(best, running)
    return best


def test_fifty_resource_diamond_respects_dependencies_and_overlaps(engine, stack_name):
    template = diamond_template()
    stack = settle(engine, engine.create_stack(stack_name, template))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert len(template["resources"]) == 50
    spans = action_spans(engine, stack.id)
    assert set(spans) == set(template["resources"])
    for name, definition in template["resources"].items():
        for dep in definition.get("depends_on", []):
            assert spans[name][0] >= spans[dep][1], f"{name} started before {dep} completed"
    # Independent resources of each layer really ran at the same time.
    for layer in range(6):
        layer_spans = [spans[f"r{layer}_{i}"] for i in range(8)]
        assert max_concurrency(layer_spans) >= 2, f"layer {layer} ran one at a time"
    assert stack.outputs == {"first": "root"}
    assert len(live(engine, stack.id)) == 49  # the sink is OS::Heat::None


def test_failure_mid_create_rolls_back_everything(engine, stack_name):
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "a": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
            "b": {"type": "OS::Heat::TestResource", "depends_on": "a",
                  "properties": {"value": {"get_attr": ["a", "output"]}}},
            "keep": {"type": "OS::Heat::TestResource", "deletion_policy": "Retain"},
            "bad": {"type": "OS::Heat::TestResource", "depends_on": ["b"],
                    "properties": {"fail": True}},
            "never": {"type": "OS::Heat::TestResource", "depends_on": ["bad"]},
        },
    }
    stack = settle(engine, engine.create_stack(stack_name, template))
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE")
    assert "resources.bad" in stack.status_reason
    assert "Test Resource failed" in stack.status_reason
    assert live(engine, stack.id) == []
    states = {r.name: (r.action, r.status) for r in engine.list_resources(stack.id)}
    assert states["never"] == ("INIT", "COMPLETE")
    assert states["a"] == ("DELETE", "COMPLETE")
    # The rollback deleted in reverse dependency order.
    order = [e.resource_name for e in engine.list_events(stack.id)
             if e.action == "DELETE" and e.status == "COMPLETE"]
    assert order.index("b") < order.index("a")


def test_disable_rollback_keeps_what_was_created(engine, stack_name):
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "a": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}},
            "bad": {"type": "OS::Heat::TestResource", "depends_on": "a",
                    "properties": {"fail": True}},
        },
    }
    stack = settle(engine, engine.create_stack(stack_name, template, disable_rollback=True))
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert stack.status_reason == "resources.bad: Test Resource failed"
    assert [o.resource_name for o in live(engine, stack.id)] == ["a"]
    bad = {r.name: r for r in engine.list_resources(stack.id)}["bad"]
    assert (bad.action, bad.status) == ("CREATE", "FAILED")
    assert "Test Resource failed" in bad.status_reason
    # A failed stack can still be deleted, and then nothing is left.
    stack = settle(engine, engine.delete_stack(stack.id))
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    assert live(engine, stack.id) == []


def test_delete_goes_in_reverse_dependency_order_and_retains(engine, stack_name):
    template = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "net": {"type": "OS::Heat::TestResource", "properties": {"value": "net"}},
            "subnet": {"type": "OS::Heat::TestResource",
                       "properties": {"value": {"get_resource": "net"}}},
            "port": {"type": "OS::Heat::TestResource",
                     "properties": {"value": {"get_attr": ["subnet", "output"]}}},
            "volume": {"type": "OS::Heat::TestResource", "deletion_policy": "Retain",
                       "properties": {"value": "data"}},
            "server": {"type": "OS::Heat::TestResource", "depends_on": ["port", "volume"]},
        },
    }
    stack = settle(engine, engine.create_stack(stack_name, template))
    assert stack.status == "COMPLETE", stack.status_reason
    ids = {r.name: r.physical_id for r in engine.list_resources(stack.id)}
    props = {o.resource_name: o.properties for o in live(engine, stack.id)}
    assert props["subnet"]["value"] == ids["net"]
    assert props["port"]["value"] == ids["net"]
    stack = settle(engine, engine.delete_stack(stack.id))
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    spans = action_spans(engine, stack.id, "DELETE")
    for first, then in [("server", "port"), ("port", "subnet"), ("subnet", "net"),
                        ("server", "volume")]:
        assert spans[first][1] <= spans[then][0], f"{then} deleted before {first}"
    remaining = live(engine, stack.id)
    assert [(o.resource_name, o.id) for o in remaining] == [("volume", ids["volume"])]
    # Deleted stacks still answer get_stack but are no longer listed.
    assert engine.get_stack(stack.id).status == "COMPLETE"
    assert stack.id not in [s.id for s in engine.list_stacks()]


def test_outputs_parameters_and_constraints(engine, stack_name):
    template = """
heat_template_version: 2021-04-16
parameters:
  prefix:
    type: string
    constraints:
      - allowed_pattern: "[a-z]+"
        description: lowercase letters only
  port:
    type: number
    default: 8080
    constraints:
      - range: {min: 1024, max: 65535}
  tags:
    type: comma_delimited_list
    default: "x,y"
  pick:
    type: string
    default: other
resources:
  other:
    type: OS::Heat::TestResource
    properties: {value: picked by name}
  secret:
    type: OS::Heat::RandomString
    properties: {length: 12, character_classes: [{class: digits, min: 12}]}
  app:
    type: OS::Heat::TestResource
    properties:
      value:
        str_replace:
          template: http://$P.example.com:$PORT/
          params: {$P: {get_param: prefix}, $PORT: {get_param: port}}
outputs:
  url: {value: {get_attr: [app, output]}}
  tags: {value: {list_join: [",", {get_param: tags}]}}
  secret: {value: {get_attr: [secret, value]}}
  missing: {value: {get_attr: [app, output, nothing_here]}}
  picked: {value: {get_attr: [{get_param: pick}, output]}}
  ref: {value: {get_resource: secret}}
"""
    with pytest.raises(exceptions.StackValidationFailed) as err:
        engine.create_stack(stack_name, template, parameters={"prefix": "Bad1"})
    assert "parameters.prefix" in str(err.value)
    assert "lowercase letters only" in str(err.value)
    with pytest.raises(exceptions.StackValidationFailed) as err:
        engine.create_stack(stack_name, template, parameters={"prefix": "ok", "port": 80})
    assert "parameters.port" in str(err.value)
    with pytest.raises(exceptions.StackValidationFailed, match="parameters.prefix"):
        engine.create_stack(stack_name, template)
    stack = settle(engine, engine.create_stack(stack_name, template,
                                               parameters={"prefix": "web", "port": "9000"}))
    assert stack.status == "COMPLETE", stack.status_reason
    assert stack.outputs["url"] == "http://web.example.com:9000/"
    assert stack.outputs["tags"] == "x,y"
    assert len(stack.outputs["secret"]) == 12 and stack.outputs["secret"].isdigit()
    assert stack.outputs["missing"] is None
    # A computed resource name: which resources outputs read is only known then.
    assert stack.outputs["picked"] == "picked by name"
    assert stack.outputs["ref"] == stack.outputs["secret"]  # RandomString's reference


def test_rejected_template_leaves_no_rows(engine, stack_name):
    before = _row_counts(engine)
    bad = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "a": {"type": "OS::Heat::TestResource", "depends_on": "b"},
            "b": {"type": "OS::Heat::TestResource", "depends_on": "a"},
        },
    }
    with pytest.raises(exceptions.DependencyCycle):
        engine.create_stack(stack_name, bad)
    with pytest.raises(exceptions.UnknownResourceType):
        engine.create_stack(stack_name, {"heat_template_version": "2016-10-14",
                                         "resources": {"x": {"type": "OS::Nova::Nope"}}})
    assert _row_counts(engine) == before


def test_unknown_stack_and_duplicate_name(engine, stack_name):
    with pytest.raises(exceptions.StackNotFound):
        engine.get_stack("no-such-stack")
    with pytest.raises(exceptions.StackNotFound):
        engine.delete_stack("no-such-stack")
    tmpl = {"heat_template_version": "2016-10-14",
            "resources": {"n": {"type": "OS::Heat::None"}}}
    settle(engine, engine.create_stack(stack_name, tmpl))
    first = engine.get_stack(stack_name)
    before = _row_counts(engine)
    with pytest.raises(exceptions.StackExists, match="already exists"):
        engine.create_stack(stack_name, tmpl)
    # The name is tested by the stack's own INSERT: its template went in
    # first, and is rolled back with it.
    assert _row_counts(engine) == before
    # Only live stacks hold their name: a deleted one frees it.
    settle(engine, engine.delete_stack(first.id))
    second = settle(engine, engine.create_stack(stack_name, tmpl))
    assert second.id != first.id and second.status == "COMPLETE"


def _row_counts(engine):
    counts = collections.Counter()
    with engine.db.reader() as session:
        for model in (models.Stack, models.Resource, models.RawTemplate, models.Event):
            counts[model.__table__.name] = session.query(model).count()
    return counts
