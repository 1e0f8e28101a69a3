"""heatclient's column names, in heatclient's order, for the list and show
commands -- with nestedflow's earlier names still answering ``-c``.

An operator's scripts say ``-c stack_status`` or ``-c "Stack Name"``
because python-heatclient's OSC plugin names the columns so (followed:
heatclient/osc/v1/stack.py ``_list`` and ``_show_stack``, resource.py
``ResourceList`` and ``ResourceShow``, event.py ``ListEvent``; heatclient
5.3.0). Those are the columns every command shows. The names nestedflow
used before (``name``, ``status``, ``created_at``...) are *legacy
columns*: not shown unless a ``-c`` asks for one, and then with their own
values (``status`` stays ``COMPLETE`` where ``stack_status`` says
``CREATE_COMPLETE``), so scripts written for either keep working.

``--filter`` and ``--sort`` take heatclient's keys too: :func:`attribute`
maps them onto the view's fields.
"""

from nestedflow.cmd.commands import columns


def _state(view):
    return f"{view.action}_{view.status}"


def _resource_name(view):
    # An event names its resource; a resource is named.
    return view.resource_name if hasattr(view, "resource_name") else view.name


#: heatclient's names of a field -> how to read it from a view.
GETTERS = {
    # stacks (list columns are title case in heatclient, show fields are not)
    "ID": lambda s: s.id,
    "Stack Name": lambda s: s.name,
    "Stack Status": _state,
    "Creation Time": lambda s: s.created_at,
    "Updated Time": lambda s: s.updated_at,
    "Deletion Time": lambda s: s.deleted_at,
    "Parent": lambda s: s.parent_id,
    "Project": lambda s: s.project_id,
    "stack_name": lambda v: v.stack_name if hasattr(v, "physical_id") else v.name,
    "stack_status": _state,
    "stack_status_reason": lambda s: s.status_reason,
    "creation_time": lambda s: s.created_at,
    "updated_time": lambda v: v.updated_at,
    "parent": lambda s: s.parent_id,
    "timeout_mins": lambda s: s.timeout,
    # resources
    "resource_name": _resource_name,
    "logical_resource_id": _resource_name,
    # Heat's API answers "" for none (heat/engine/api.py format_event).
    "physical_resource_id": lambda r: r.physical_id or "",
    "resource_type": lambda r: r.type,
    "resource_status": _state,
    "resource_status_reason": lambda r: r.status_reason,
    "resource_action": lambda r: r.action,
    # events
    "event_time": lambda e: e.timestamp,
}

#: heatclient's filter/sort keys -> the view's field (Heat's API keys too).
KEYS = {"stack_name": "name", "stack_status": "status", "stack_action": "action",
        "creation_time": "created_at", "updated_time": "updated_at",
        "resource_name": "name", "resource_status": "status", "resource_action": "action",
        "resource_type": "type", "physical_resource_id": "physical_id",
        "resource_status_reason": "status_reason", "event_time": "timestamp"}


def attribute(view_class_fields, key):
    """The view field a ``--filter``/``--sort`` key names (heatclient's or ours)."""
    if key in view_class_fields:
        return key
    return KEYS.get(key, key)


def value(view, name):
    getter = GETTERS.get(name)
    try:
        found = getter(view) if getter else getattr(view, name, None)
    except AttributeError:
        found = None  # a view of an older engine (over RPC) lacks the field
    return columns.cell(found)


def names(parsed_args, shown, legacy):
    """The columns to produce: ``shown`` (heatclient's), plus the legacy
    ones a ``-c`` asks for by name, so cliff's selection finds them."""
    asked = getattr(parsed_args, "columns", None) or ()
    # cliff matches -c after lower-casing and turning spaces into
    # underscores: "id" and "stack_name" already pick "ID" and "Stack Name".
    taken = {_normalized(name) for name in shown}
    extra = tuple(name for name in asked
                  if name in legacy and _normalized(name) not in taken)
    return tuple(shown) + extra


def _normalized(name):
    return name.lower().strip().replace(" ", "_")


def rows(views, names_):
    return [tuple(value(v, n) for n in names_) for v in views]
