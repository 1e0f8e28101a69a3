"""nestedflow.heat_rpc's pieces that need no server: Heat-named faults as
oslo.messaging sends them, Heat's time format, paging, environments."""

import datetime
import types

import oslo_messaging as messaging
import pytest
from oslo_messaging._drivers import common as driver_common

from nestedflow import exceptions
from nestedflow.heat_rpc import faults, formats, paging, service, stacks


def test_fault_crosses_the_wire_as_heats_class():
    """What heat-api's transport rebuilds: module heat.common.exception, the
    class name, no args, msg_fmt's keyword arguments
    (oslo_messaging/_drivers/common.py serialize_remote_exception)."""
    fault = faults.stack_not_found("web")
    try:
        raise fault
    except exceptions.HeatFault:
        import json
        import sys

        data = json.loads(driver_common.serialize_remote_exception(sys.exc_info()))
    assert data["class"] == "EntityNotFound"
    assert data["module"] == "heat.common.exception"
    assert data["args"] == []
    assert data["kwargs"] == {"entity": "Stack", "name": "web"}
    assert data["message"].startswith("The Stack (web) could not be found.")
    assert type(fault) is type(faults.stack_not_found("other"))


@pytest.mark.parametrize("error, name, kwargs", [
    (exceptions.StackNotFound("x"), "EntityNotFound", {"entity": "Stack", "name": "x"}),
    (exceptions.StackExists("web"), "StackExists", {"stack_name": "web"}),
    (exceptions.UnknownResourceType("OS::Nope", path="resources.a.type"),
     "StackValidationFailed",
     {"message": "The Resource Type (OS::Nope) could not be found."}),
    (exceptions.StackValidationFailed("bad", path="heat_template_version"),
     "InvalidTemplateVersion", {"explanation": "bad"}),
    (exceptions.SnapshotNotFound("s1"), "SnapshotNotFound", {"snapshot": "s1", "stack": ""}),
])
def test_translate(error, name, kwargs):
    fault = faults.translate(error)
    assert type(fault).__name__ == name and fault.kwargs == kwargs


def test_action_not_allowed_is_409_only_while_in_progress():
    error = exceptions.ActionNotAllowed("busy")
    busy = types.SimpleNamespace(name="web", action="UPDATE", status="IN_PROGRESS")
    assert type(faults.translate(error, busy)).__name__ == "ActionInProgress"
    done = types.SimpleNamespace(name="web", action="UPDATE", status="COMPLETE")
    assert type(faults.translate(error, done)).__name__ == "StackValidationFailed"
    assert faults.translate(exceptions.WaitTimeout("x")) is None


def test_isotime():
    aware = datetime.datetime(2026, 1, 2, 4, 5, 6, 789, tzinfo=datetime.timezone(
        datetime.timedelta(hours=1)))
    assert formats.isotime(aware) == "2026-01-02T03:05:06Z"
    assert formats.isotime("2026-01-02T03:05:06.5") == "2026-01-02T03:05:06Z"
    assert formats.isotime(None) is None


def test_page_sorts_marks_and_limits():
    items = [types.SimpleNamespace(id=str(i), name=name, created_at=i)
             for i, name in enumerate(["b", "a", "c", "d"])]
    newest = paging.page(items, paging.STACK_SORT_KEYS, None, "desc", None, None,
                         default_key="creation_time")
    assert [s.id for s in newest] == ["3", "2", "1", "0"]
    by_name = paging.page(items, paging.STACK_SORT_KEYS, ["stack_name"], "asc", "0", "2",
                          default_key="creation_time")
    assert [s.name for s in by_name] == ["c", "d"]
    with pytest.raises(exceptions.HeatFault):
        paging.page(items, paging.STACK_SORT_KEYS, None, "up", None, None,
                    default_key="creation_time")


def test_status_filter():
    stacks_ = [types.SimpleNamespace(action=a, status=s) for a, s in
               [("CREATE", "COMPLETE"), ("UPDATE", "COMPLETE"), ("CREATE", "FAILED")]]
    assert len(paging.filter_stacks(stacks_, {"status": "COMPLETE"})) == 2
    assert len(paging.filter_stacks(stacks_, {"status": ["CREATE_COMPLETE",
                                                         "CREATE_FAILED"]})) == 2


def test_environment_files_merge_over_the_given_environment_in_order():
    params, environment = stacks.split_params(
        {"parameters": {"a": 1, "b": 1}, "event_sinks": []},
        {"e1.yaml": "parameters: {b: 2, c: 2}\n",
         "e2.yaml": "parameters: {c: 3}\nparameter_defaults: {d: 4}\n"},
        ["e1.yaml", "e2.yaml"])
    assert params == {"a": 1, "b": 2, "c": 3}
    assert environment == {"parameter_defaults": {"d": 4}}
    with pytest.raises(exceptions.HeatFault):
        stacks.split_params({}, {}, ["missing.yaml"])


def test_the_endpoint_declares_heats_version():
    assert service.HeatEngineEndpoint.target.version == "1.36"
    assert isinstance(service.HeatEngineEndpoint.target, messaging.Target)
