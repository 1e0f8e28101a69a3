"""``OS::Heat::WaitConditionHandle``, ``UpdateWaitConditionHandle`` and
``WaitCondition`` as Heat's.

Followed: heat/engine/resources/openstack/heat/wait_condition.py
(HeatWaitCondition._wait, handle_update, handle_delete, data attribute),
wait_condition_handle.py (normalise_signal_data, attributes,
UpdateWaitConditionHandle._needs_update), heat/engine/resources/
wait_condition.py (WaitConditionFailure, WaitConditionTimeout messages) and
heat/tests/openstack/heat/test_waitcondition.py (HeatWaitConditionTest:
test_post_complete_to_handle, test_post_failed_to_handle, test_timeout,
test_data, test_update_wait_condition_handle).
"""

import json
import time

import pytest

from nestedflow import exceptions

HOT = "2015-04-30"


def template(count=1, timeout=60, handle="OS::Heat::WaitConditionHandle", extra=None):
    resources = {
        "handle": {"type": handle},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "count": count,
                                "timeout": timeout}},
    }
    resources.update(extra or {})
    outputs = {"data": {"value": {"get_attr": ["wait", "data"]}}}
    if handle == "OS::Heat::WaitConditionHandle":
        outputs.update({name: {"value": {"get_attr": ["handle", attr]}} for name, attr in (
            ("curl", "curl_cli"), ("endpoint", "endpoint"), ("token", "token"),
            ("signal", "signal"))})
    return {"heat_template_version": HOT, "resources": resources, "outputs": outputs}


def _until(predicate, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def _state(engine, stack_id, name):
    row = next(r for r in engine.list_resources(stack_id) if r.name == name)
    return f"{row.action}_{row.status}"


def _in_progress(engine, stack_id):
    _until(lambda: _state(engine, stack_id, "wait") == "CREATE_IN_PROGRESS"
           and _state(engine, stack_id, "handle") == "CREATE_COMPLETE")


def test_count_two_released_by_two_signals_with_data(sqlite_engine, stack_name):
    """test_post_complete_to_handle / test_data: the wait holds until the
    second SUCCESS; ``data`` maps each signal id to its data."""
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(count=2))
    _in_progress(engine, stack.id)
    engine.signal_resource(stack.id, "handle", {"status": "SUCCESS", "data": "foo",
                                                "reason": "first", "id": "a"})
    time.sleep(0.5)
    assert _state(engine, stack.id, "wait") == "CREATE_IN_PROGRESS"
    engine.signal_resource(stack.id, "handle", {"data": {"k": "v"}})  # Heat's defaults
    done = engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("CREATE", "COMPLETE"), done.status_reason
    # Heat's data attribute: JSON of id -> data; an unnamed signal is numbered.
    assert json.loads(done.outputs["data"]) == {"a": "foo", "2": {"k": "v"}}
    reasons = [e.status_reason for e in engine.list_events(stack.id)
               if e.resource_name == "handle" and e.action == "SIGNAL"]
    assert reasons == ["Signal: status:SUCCESS reason:first",
                       "Signal: status:SUCCESS reason:Signal 2 received"]
    # Heat's TOKEN_SIGNAL attributes: a token, the signal endpoint, a command
    # that signals it (curl behind heat-api; here nestedflow's own), no signal map.
    assert done.outputs["token"]
    assert done.outputs["endpoint"] == (
        f"nestedflow:stacks/{stack_name}/{stack.id}/resources/handle/signal")
    assert done.outputs["curl"] == f"nestedflow stack resource signal {stack.id} handle"
    assert done.outputs["signal"] == "null"


def test_failure_signal_fails_the_wait(sqlite_engine, stack_name):
    """test_post_failed_to_handle: WaitConditionFailure with the reason."""
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(count=2), disable_rollback=True)
    _in_progress(engine, stack.id)
    engine.signal_resource(stack.id, "handle", {"status": "FAILURE", "reason": "disk full"})
    done = engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("CREATE", "FAILED")
    wait = next(r for r in engine.list_resources(stack.id) if r.name == "wait")
    assert wait.status_reason == "WaitConditionFailure: disk full"


def test_timeout_fails_with_heats_reason(sqlite_engine, stack_name):
    """test_timeout: WaitConditionTimeout "1 of 2 received - <reasons>"."""
    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(count=2, timeout=3),
                                disable_rollback=True)
    _in_progress(engine, stack.id)
    engine.signal_resource(stack.id, "handle", {"reason": "one is up"})
    done = engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("CREATE", "FAILED")
    wait = next(r for r in engine.list_resources(stack.id) if r.name == "wait")
    assert wait.status_reason == "WaitConditionTimeout: 1 of 2 received - one is up"
    assert "resources.wait: 1 of 2 received - one is up" in done.status_reason


def test_bad_signals_refused(sqlite_engine, stack_name):
    """BaseWaitConditionHandle: "Metadata format invalid" (a status other
    than SUCCESS/FAILURE); a retried request (same request id) counts once."""
    from oslo_context import context as oslo_context

    engine = sqlite_engine
    stack = engine.create_stack(stack_name, template(count=2, timeout=5),
                                disable_rollback=True)
    _in_progress(engine, stack.id)
    with pytest.raises(exceptions.ResourceFailure, match="Metadata format invalid"):
        engine.signal_resource(stack.id, "handle", {"status": "MAYBE"})
    request = oslo_context.RequestContext(request_id="req-1", overwrite=False)
    engine.signal_resource(stack.id, "handle", {"reason": "once"}, context=request)
    engine.signal_resource(stack.id, "handle", {"reason": "once"}, context=request)
    done = engine.wait(stack.id, timeout=60)
    wait = next(r for r in engine.list_resources(stack.id) if r.name == "wait")
    assert done.status == "FAILED"
    assert wait.status_reason == "WaitConditionTimeout: 1 of 2 received - once"


def test_update_in_place_replace_delete_and_rollback(sqlite_engine, stack_name):
    """count is update_allowed (handle_update waits again with the new
    count); timeout is not (replaced); an UpdateWaitConditionHandle is
    replaced by every update and starts with no signals; a failed update
    rolls back; delete clears the handle's signals (handle_delete)."""
    engine = sqlite_engine
    tmpl = template(count=1, handle="OS::Heat::UpdateWaitConditionHandle")
    stack = engine.create_stack(stack_name, tmpl)
    _in_progress(engine, stack.id)
    aws = {"Status": "SUCCESS", "Reason": "r", "Data": "d1", "UniqueId": "1"}
    engine.signal_resource(stack.id, "handle", aws)
    assert engine.wait(stack.id, timeout=60).status == "COMPLETE"
    first = {r.name: r.physical_id for r in engine.list_resources(stack.id)}

    # In place: count 1 -> 2 waits for a second signal on the same handle...
    # except this handle is replaced by every update: both signals again.
    engine.update_stack(stack.id, template(count=2,
                                           handle="OS::Heat::UpdateWaitConditionHandle"))
    _until(lambda: _state(engine, stack.id, "wait") == "UPDATE_IN_PROGRESS")
    handle = next(r for r in engine.list_resources(stack.id) if r.name == "handle")
    assert handle.physical_id != first["handle"]
    for unique in ("1", "2"):
        engine.signal_resource(stack.id, "handle", dict(aws, UniqueId=unique,
                                                        Data=f"new{unique}"))
    done = engine.wait(stack.id, timeout=60)
    assert (done.action, done.status) == ("UPDATE", "COMPLETE"), done.status_reason
    wait = next(r for r in engine.list_resources(stack.id) if r.name == "wait")
    assert wait.physical_id == first["wait"]  # count changed in place
    assert json.loads(done.outputs["data"]) == {"1": "new1", "2": "new2"}

    # Replace: a new timeout makes a new wait condition; no signal comes,
    # so it times out and the update rolls back to the previous one.
    engine.update_stack(stack.id, template(count=2, timeout=2,
                                           handle="OS::Heat::UpdateWaitConditionHandle"))
    done = engine.wait(stack.id, timeout=120)
    assert (done.action, done.status) == ("ROLLBACK", "COMPLETE"), done.status_reason
    wait = next(r for r in engine.list_resources(stack.id) if r.name == "wait")
    assert wait.physical_id == first["wait"]

    rows = [r for r in engine.db.list_resources(stack.id, current_only=False)
            if r.name == "handle"]
    assert any(engine.db.list_signals(r.id) for r in rows)
    engine.delete_stack(stack.id)
    assert engine.wait(stack.id, timeout=60).status == "COMPLETE"
    assert not any(engine.db.list_signals(r.id) for r in rows)
