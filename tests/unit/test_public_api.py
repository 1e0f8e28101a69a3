"""Freezes the public surface of DESIGN.md section 3: changing it breaks users."""

import dataclasses
import inspect

import nestedflow
from nestedflow import exceptions, testing

ENGINE_SIGNATURES = {
    "__init__": "(self, db_url=None, jobboard_url=None, transport_url=None, *, "
    "max_workers=None, registry=None, engine_id=None)",
    "create_stack": "(self, name, template, parameters=None, files=None, environment=None, "
    "disable_rollback=False, timeout=None)",
    "update_stack": "(self, stack_id, template, parameters=None, files=None, "
    "environment=None, existing=False, disable_rollback=None)",
    "delete_stack": "(self, stack_id)",
    "suspend_stack": "(self, stack_id)",
    "resume_stack": "(self, stack_id)",
    "check_stack": "(self, stack_id)",
    "cancel_update": "(self, stack_id, rollback=True)",
    "wait": "(self, stack_id, timeout=None)",
    "get_stack": "(self, stack_id)",
    "list_stacks": "(self, show_nested=False)",
    "list_resources": "(self, stack_id, nested_depth=0)",
    "list_events": "(self, stack_id, nested_depth=0)",
}


def test_engine_methods_and_signatures():
    for name, signature in ENGINE_SIGNATURES.items():
        method = getattr(nestedflow.Engine, name)
        assert str(inspect.signature(method)) == signature, name


def test_view_fields():
    stack_fields = {f.name for f in dataclasses.fields(nestedflow.Stack)}
    assert {"id", "name", "action", "status", "status_reason", "outputs",
            "parent_id"} <= stack_fields
    resource_fields = {f.name for f in dataclasses.fields(nestedflow.Resource)}
    assert {"name", "type", "physical_id", "action", "status", "status_reason",
            "properties"} <= resource_fields
    event_fields = {f.name for f in dataclasses.fields(nestedflow.Event)}
    assert {"id", "timestamp", "resource_name", "action", "status", "status_reason",
            "physical_id"} <= event_fields


def test_exceptions_and_helpers():
    assert nestedflow.exceptions is exceptions
    assert issubclass(exceptions.StackNotFound, exceptions.NestedflowError)
    assert issubclass(exceptions.StackValidationFailed, exceptions.NestedflowError)
    assert issubclass(exceptions.UpdateReplace, exceptions.NestedflowError)
    assert str(inspect.signature(testing.physical_objects)) == "(engine, stack_id=None)"


def test_entry_points():
    from importlib.metadata import entry_points

    groups = entry_points()
    resources = {ep.name for ep in groups.select(group="nestedflow.resources")}
    assert {"OS::Heat::None", "OS::Heat::TestResource", "OS::Heat::RandomString"} <= resources
    scripts = {ep.name for ep in groups.select(group="console_scripts")}
    assert "nestedflow" in scripts
