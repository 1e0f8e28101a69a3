"""The engine API's methods and versions: a name table both channels read.

The oslo.messaging client and service (:mod:`nestedflow.rpc.api`) and the
resident engine's local socket (:mod:`nestedflow.rpc.resident_client`)
serve exactly these methods. Kept apart from :mod:`nestedflow.rpc.api`
because that module imports oslo.messaging and the engine's views, which
the command line's resident client must not pay for (see
:mod:`nestedflow.rpc.resident_client`).
"""

#: The newest version this code speaks.
VERSION = "1.6"

#: Method name -> version that introduced it.
METHODS = {
    "create_stack": "1.0",
    "update_stack": "1.0",
    "delete_stack": "1.0",
    "suspend_stack": "1.0",
    "resume_stack": "1.0",
    "check_stack": "1.0",
    "cancel_update": "1.0",
    "get_stack": "1.0",
    "list_stacks": "1.0",
    "list_resources": "1.0",
    "list_events": "1.0",
    "wait": "1.0",
    "count_stacks": "1.1",
    "validate_template": "1.2",
    "list_checks": "1.3",
    "stop_stack": "1.3",
    "continue_stack": "1.3",
    "rerun": "1.3",
    "preview_stack": "1.4",
    "preview_update_stack": "1.4",
    "get_template": "1.4",
    "get_environment": "1.4",
    "get_files": "1.4",
    "abandon_stack": "1.4",
    "stack_snapshot": "1.4",
    "list_snapshots": "1.4",
    "show_snapshot": "1.4",
    "delete_snapshot": "1.4",
    "restore_snapshot": "1.4",
    "mark_resource_unhealthy": "1.4",
    "create_software_config": "1.5",
    "show_software_config": "1.5",
    "list_software_configs": "1.5",
    "delete_software_config": "1.5",
    "create_software_deployment": "1.5",
    "update_software_deployment": "1.5",
    "show_software_deployment": "1.5",
    "list_software_deployments": "1.5",
    "delete_software_deployment": "1.5",
    "metadata_software_deployments": "1.5",
    "signal_software_deployment": "1.5",
    "resource_attributes": "1.5",
    "signal_resource": "1.5",
    "list_services": "1.6",
}

#: Arguments added to a method after the version that introduced it: the
#: client sends them, at that version, only when given.
LATER_ARGUMENTS = {
    "create_stack": (("1.4", ("adopt_stack_data", "tags")),),
    "update_stack": (("1.4", ("timeout", "tags")), ("1.5", ("clear_parameters",))),
    "list_stacks": (("1.4", ("tags", "tags_any", "not_tags", "not_tags_any")),
                    ("1.5", ("show_deleted", "show_hidden"))),
    "validate_template": (("1.6", ("show_nested", "ignorable_errors")),),
}


def version_key(version):
    """``"1.10"`` after ``"1.9"``: versions compare as numbers."""
    return tuple(int(part) for part in version.split("."))
