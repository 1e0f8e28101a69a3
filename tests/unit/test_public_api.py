"""Freezes the public surface (doc/source/user-guide.rst, "Python API").

Changing it breaks users.
"""

import dataclasses
import inspect

import nestedflow
from nestedflow import exceptions, testing

ENGINE_SIGNATURES = {
    "__init__": "(self, db_url=None, jobboard_url=None, transport_url=None, *, "
    "max_workers=None, registry=None, engine_id=None, conf=None)",
    "create_stack": "(self, name, template, parameters=None, files=None, environment=None, "
    "disable_rollback=False, timeout=None, adopt_stack_data=None, tags=None, context=None)",
    "update_stack": "(self, stack_id, template, parameters=None, files=None, "
    "environment=None, existing=False, disable_rollback=None, timeout=None, tags=None, "
    "clear_parameters=None, context=None)",
    "delete_stack": "(self, stack_id, context=None)",
    "suspend_stack": "(self, stack_id, context=None)",
    "resume_stack": "(self, stack_id, context=None)",
    "check_stack": "(self, stack_id, context=None)",
    "cancel_update": "(self, stack_id, rollback=True, context=None)",
    "wait": "(self, stack_id, timeout=None, context=None)",
    "get_stack": "(self, stack_id, context=None)",
    "list_stacks": "(self, show_nested=False, tags=None, tags_any=None, not_tags=None, "
    "not_tags_any=None, show_deleted=False, show_hidden=False, context=None)",
    "list_resources": "(self, stack_id, nested_depth=0, context=None)",
    "list_events": "(self, stack_id, nested_depth=0, context=None)",
    "count_stacks": "(self, show_nested=False, context=None)",
    "validate_template": "(self, template, files=None, environment=None, parameters=None, "
    "show_nested=False, ignorable_errors=None, context=None)",
    "preview_stack": "(self, name, template, parameters=None, files=None, environment=None, "
    "timeout=None, disable_rollback=False, context=None)",
    "preview_update_stack": "(self, stack_id, template, parameters=None, files=None, "
    "environment=None, existing=False, show_nested=False, context=None)",
    "get_template": "(self, stack_id, context=None)",
    "get_environment": "(self, stack_id, context=None)",
    "get_files": "(self, stack_id, context=None)",
    "abandon_stack": "(self, stack_id, abandon=True, context=None)",
    "stack_snapshot": "(self, stack_id, name=None, context=None)",
    "list_snapshots": "(self, stack_id, context=None)",
    "show_snapshot": "(self, stack_id, snapshot_id, context=None)",
    "delete_snapshot": "(self, stack_id, snapshot_id, context=None)",
    "restore_snapshot": "(self, stack_id, snapshot_id, context=None)",
    "mark_resource_unhealthy": "(self, stack_id, resource_name, mark_unhealthy=True, "
    "resource_status_reason='', context=None)",
    "resource_attributes": "(self, stack_id, resource_name, names=None, context=None)",
    # The software-config store: Heat's service_software_config.py signatures.
    "create_software_config": "(self, group, name, config, inputs, outputs, options, "
    "context=None)",
    "show_software_config": "(self, config_id, context=None)",
    "list_software_configs": "(self, limit=None, marker=None, context=None)",
    "delete_software_config": "(self, config_id, context=None)",
    "create_software_deployment": "(self, server_id, config_id, input_values, action, "
    "status, status_reason, stack_user_project_id, deployment_id=None, context=None)",
    "update_software_deployment": "(self, deployment_id, config_id, input_values, "
    "output_values, action, status, status_reason, updated_at, context=None)",
    "show_software_deployment": "(self, deployment_id, context=None)",
    "list_software_deployments": "(self, server_id=None, context=None)",
    "delete_software_deployment": "(self, deployment_id, context=None)",
    "metadata_software_deployments": "(self, server_id, context=None)",
    "signal_software_deployment": "(self, deployment_id, details, updated_at=None, "
    "context=None)",
    "signal_resource": "(self, stack_id, resource_name, details=None, context=None)",
    "list_services": "(self, context=None)",
}


def test_engine_methods_and_signatures():
    for name, signature in ENGINE_SIGNATURES.items():
        method = getattr(nestedflow.Engine, name)
        assert str(inspect.signature(method)) == signature, name


#: Engine methods with no RPC counterpart: they only make sense in-process.
IN_PROCESS_ONLY = {"subscribe", "close", "recover_orphans",  # recover: this process runs them
                   "unclaimed"}  # asks this process's own jobboard connection


def test_engine_subscribe():
    assert str(inspect.signature(nestedflow.Engine.subscribe)) == "(self, callback)"


def test_engine_client_has_the_engine_methods_and_signatures():
    from nestedflow.rpc import EngineClient, api

    # The whole Engine API is served: a new Engine method needs its RPC
    # version in nestedflow/rpc/api.py and a method on EngineClient.
    public = {name for cls in nestedflow.Engine.__mro__[:-1]
              for name, value in vars(cls).items()
              if callable(value) and not name.startswith("_")}
    assert public - set(api.METHODS) == IN_PROCESS_ONLY
    for name in api.METHODS:
        assert (inspect.signature(getattr(EngineClient, name))
                == inspect.signature(getattr(nestedflow.Engine, name))), name
    assert str(inspect.signature(EngineClient)).startswith("(transport_url=None, conf=None")


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


def test_the_plugin_authors_import_paths_still_work():
    """doc/source/plugins.rst: a plugin subclasses the resource base class
    and declares its schema; the schema moved below template and resources
    (nestedflow.properties) and stays importable where plugins found it."""
    from nestedflow.properties import schema
    from nestedflow.resources import base
    from nestedflow.resources import schema as old_schema

    for name in ("Property", "Attribute", "Types", "UNRESOLVED", "StackSummary"):
        assert getattr(old_schema, name) is getattr(schema, name)
    assert base.StackSummary is schema.StackSummary
    assert inspect.isabstract(base.Resource)
