"""Signals (``Engine.signal_resource``) and breakpoints (Heat's hooks).

Heat's behaviour followed: heat/engine/service.py ``resource_signal`` and
heat/engine/resource.py ``Resource.signal`` / ``_signal_check_hook`` /
``_signal_check_action`` / ``_break_if_required``; the event reasons are
those heatclient's hook poll looks for (heatclient/common/event_utils.py
``get_hook_events``) and heat_integrationtests' hook tests wait on.
"""

import time

import pytest

from nestedflow import exceptions
from nestedflow.testing import physical_objects

TR = "OS::Heat::TestResource"
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"first": {"type": TR, "properties": {"value": "one"}},
                          "second": {"type": TR, "properties": {"value": "two"},
                                     "depends_on": ["first"]}}}


def _reasons(engine, stack_id, name):
    return [e.status_reason for e in engine.list_events(stack_id) if e.resource_name == name]


def _until(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def test_signal_refused_by_a_type_that_takes_none(sqlite_engine, stack_name):
    """Resource._handle_signal: no handle_signal -> ResourceActionNotSupported
    (heat-api: 400); an unknown resource -> ResourceNotFound."""
    stack = sqlite_engine.create_stack(stack_name, TEMPLATE)
    sqlite_engine.wait(stack.id, timeout=60)
    with pytest.raises(exceptions.ResourceActionNotSupported,
                       match=r"signal is not supported for resource first \(OS::Heat::"):
        sqlite_engine.signal_resource(stack.id, "first", {"anything": 1})
    with pytest.raises(exceptions.ResourceNotFound, match="nope"):
        sqlite_engine.signal_resource(stack.id, "nope")
    with pytest.raises(exceptions.InvalidBreakPointHook,
                       match='The "pre-create" hook is not defined on first'):
        sqlite_engine.signal_resource(stack.id, "first", {"unset_hook": "pre-create"})
    with pytest.raises(exceptions.InvalidBreakPointHook, match='Invalid hook type "pre-lunch"'):
        sqlite_engine.signal_resource(stack.id, "first", {"unset_hook": "pre-lunch"})


def test_pre_create_hook_pauses_until_cleared(sqlite_engine, stack_name):
    """A stack paused at a pre-create hook, polled through its events,
    cleared with {"unset_hook": "pre-create"}, then completed (Heat's
    test_hooks: the dependent resource waits too)."""
    env = {"resource_registry": {"resources": {"fir*": {"hooks": "pre-create"}}}}
    stack = sqlite_engine.create_stack(stack_name, TEMPLATE, environment=env)
    paused = "CREATE paused until Hook pre-create is cleared"
    _until(lambda: paused in _reasons(sqlite_engine, stack.id, "first"))
    time.sleep(0.5)
    assert sqlite_engine.get_stack(stack.id).status == "IN_PROGRESS"
    # Nothing was created while paused, and the dependent has not started.
    assert physical_objects(sqlite_engine, stack.id) == []
    assert not _reasons(sqlite_engine, stack.id, "second")
    sqlite_engine.signal_resource(stack.id, "first", {"unset_hook": "pre-create"})
    done = sqlite_engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("CREATE", "COMPLETE")
    reasons = _reasons(sqlite_engine, stack.id, "first")
    assert reasons.index(paused) < reasons.index("Hook pre-create is cleared")
    assert len(physical_objects(sqlite_engine, stack.id)) == 2
    # Cleared once: a second clear finds no pending hook.
    with pytest.raises(exceptions.InvalidBreakPointHook):
        sqlite_engine.signal_resource(stack.id, "first", {"unset_hook": "pre-create"})


def test_pre_update_hook_pauses_until_cleared(sqlite_engine, stack_name):
    env = {"resource_registry": {"resources": {"second": {"hooks": ["pre-update"]}}}}
    stack = sqlite_engine.create_stack(stack_name, TEMPLATE, environment=env)
    sqlite_engine.wait(stack.id, timeout=60)
    changed = {"heat_template_version": "2018-08-31",
               "resources": {"first": TEMPLATE["resources"]["first"],
                             "second": {"type": TR, "properties": {"value": "changed"},
                                        "depends_on": ["first"]}}}
    sqlite_engine.update_stack(stack.id, changed, environment=env)
    paused = "UPDATE paused until Hook pre-update is cleared"
    _until(lambda: paused in _reasons(sqlite_engine, stack.id, "second"))
    second = next(r for r in sqlite_engine.list_resources(stack.id) if r.name == "second")
    assert second.properties["value"] == "two" or second.status == "IN_PROGRESS"
    objects = {o.resource_name: o for o in physical_objects(sqlite_engine, stack.id)}
    assert objects["second"].properties["value"] == "two"
    sqlite_engine.signal_resource(stack.id, "second", {"unset_hook": "pre-update"})
    done = sqlite_engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("UPDATE", "COMPLETE")
    objects = {o.resource_name: o for o in physical_objects(sqlite_engine, stack.id)}
    assert objects["second"].properties["value"] == "changed"
    assert "Hook pre-update is cleared" in _reasons(sqlite_engine, stack.id, "second")


def test_cancel_while_paused_clears_the_hook(sqlite_engine, stack_name):
    """_break_if_required: a failure while waiting clears the hook and
    records "Failure occurred while waiting."."""
    env = {"resource_registry": {"resources": {"first": {"hooks": "pre-create"}}}}
    stack = sqlite_engine.create_stack(stack_name, TEMPLATE, environment=env,
                                       disable_rollback=True)
    _until(lambda: "CREATE paused until Hook pre-create is cleared"
           in _reasons(sqlite_engine, stack.id, "first"))
    sqlite_engine.cancel_update(stack.id, rollback=False)
    done = sqlite_engine.wait(stack.id, timeout=60)
    assert done.status == "FAILED"
    assert "Failure occurred while waiting." in _reasons(sqlite_engine, stack.id, "first")


def test_nested_and_pre_delete_hooks(sqlite_engine, stack_name):
    """Heat's nested hook paths (resource_registry resources: group: "0":
    hooks) pause the member in the child stack; pre-delete pauses a delete."""
    engine = sqlite_engine
    template = {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": TR}}}}}
    env = {"resource_registry": {"resources": {
        "group": {"0": {"hooks": "pre-create"}}, "gro*": {"hooks": "pre-delete"}}}}
    stack = engine.create_stack(stack_name, template, environment=env)
    child_id = _until(lambda: next((s.id for s in engine.list_stacks(show_nested=True)
                                    if s.parent_id == stack.id), None))
    _until(lambda: "CREATE paused until Hook pre-create is cleared"
           in _reasons(engine, child_id, "0"))
    assert not _reasons(engine, stack.id, "group") or engine.get_stack(
        stack.id).status == "IN_PROGRESS"
    engine.signal_resource(child_id, "0", {"unset_hook": "pre-create"})
    assert engine.wait(stack.id, timeout=60).status == "COMPLETE"
    engine.delete_stack(stack.id)
    _until(lambda: "DELETE paused until Hook pre-delete is cleared"
           in _reasons(engine, stack.id, "group"))
    assert len(physical_objects(engine, child_id)) == 2
    engine.signal_resource(stack.id, "group", {"unset_hook": "pre-delete"})
    done = engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("DELETE", "COMPLETE")
    assert physical_objects(engine, child_id) == []
