"""Stack tags with Heat's list filters, update timeouts, and marking a
resource unhealthy so the next update replaces it (Heat's
resource_mark_unhealthy under convergence)."""

import pytest

from nestedflow import exceptions
from nestedflow.testing import physical_objects

TR = "OS::Heat::TestResource"
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": TR, "properties": {"value": "a"}},
                          "b": {"type": TR, "properties": {"value": "b"}}}}


def test_tags_filter_stack_lists_as_heat_does(engine, stack_name):
    made = {}
    for suffix, tags in (("web", ["web", "prod"]), ("db", ["db", "prod"]), ("none", None)):
        stack = engine.create_stack(f"{stack_name}-{suffix}", TEMPLATE, tags=tags)
        made[suffix] = stack.id
        engine.wait(stack.id, timeout=60)
    assert engine.get_stack(made["web"]).tags == ("web", "prod")

    def listed(**filters):
        return sorted(name for name, stack_id in made.items()
                      if stack_id in {s.id for s in engine.list_stacks(**filters)})

    assert listed() == ["db", "none", "web"]
    assert listed(tags=["prod", "web"]) == ["web"]
    assert listed(tags="prod") == ["db", "web"]
    assert listed(tags_any="web,db") == ["db", "web"]
    assert listed(not_tags=["prod", "web"]) == ["db", "none"]
    assert listed(not_tags_any=["prod"]) == ["none"]
    # PATCH keeps them; a PUT without tags clears them (Heat).
    engine.wait(engine.update_stack(made["web"], None, existing=True).id, timeout=60)
    assert engine.get_stack(made["web"]).tags == ("web", "prod")
    engine.wait(engine.update_stack(made["web"], TEMPLATE, tags=["blue"]).id, timeout=60)
    assert engine.get_stack(made["web"]).tags == ("blue",)
    engine.wait(engine.update_stack(made["web"], TEMPLATE).id, timeout=60)
    assert engine.get_stack(made["web"]).tags == ()
    with pytest.raises(exceptions.StackValidationFailed, match=r"tags\[1\]"):
        engine.create_stack(f"{stack_name}-bad", TEMPLATE, tags=["ok", "x" * 81])


def test_update_sets_the_timeout(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    assert stack.timeout is None
    updated = engine.wait(engine.update_stack(stack.id, None, existing=True, timeout=7).id,
                          timeout=60)
    assert updated.timeout == 7
    with pytest.raises(exceptions.StackValidationFailed, match="timeout"):
        engine.update_stack(stack.id, None, existing=True, timeout=0)


def test_an_unhealthy_resource_is_replaced_by_the_next_update(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE).id, timeout=60)
    old = {o.resource_name: o.id for o in physical_objects(engine, stack.id)}
    engine.mark_resource_unhealthy(stack.id, "a", True, "disk on fire")
    a = next(r for r in engine.list_resources(stack.id) if r.name == "a")
    assert (a.action, a.status, a.status_reason) == ("CHECK", "FAILED", "disk on fire")
    preview = engine.preview_update_stack(stack.id, None, existing=True)
    assert [r["resource_name"] for r in preview["replaced"]] == ["a"]
    engine.wait(engine.update_stack(stack.id, None, existing=True).id, timeout=60)
    new = {o.resource_name: o.id for o in physical_objects(engine, stack.id)}
    assert new["a"] != old["a"] and new["b"] == old["b"]
    # Marked and unmarked: healthy again, kept by the next update.
    engine.mark_resource_unhealthy(stack.id, "b", True)
    engine.mark_resource_unhealthy(stack.id, "b", False)
    b = next(r for r in engine.list_resources(stack.id) if r.name == "b")
    assert (b.action, b.status) == ("CHECK", "COMPLETE")
    engine.wait(engine.update_stack(stack.id, None, existing=True).id, timeout=60)
    assert {o.resource_name: o.id for o in physical_objects(engine, stack.id)} == new
    with pytest.raises(exceptions.ResourceNotFound):
        engine.mark_resource_unhealthy(stack.id, "nope")
