"""Signalling a resource (Heat's ``EngineService.resource_signal``).

As Heat (heat/engine/service.py resource_signal, heat/engine/resource.py
Resource.signal): ``{"unset_hook": <hook>}`` clears a breakpoint the
resource's action is paused at (the hook must be pending: otherwise
InvalidBreakPointHook) and records "Hook <hook> is cleared"; any other
signal is refused during SUSPEND and DELETE ("Signal resource during
<action>" not supported) and by a type without ``handle_signal``
(ResourceActionNotSupported); an accepted signal is handed to the type's
``handle_signal`` and recorded as a SIGNAL event. Either way, actions
waiting for the resource wake (:meth:`StackEvents.signalled`).

The signal's key makes it idempotent: a call retried with the same
request context (same ``request_id``) is kept once.
"""

import uuid

from nestedflow import exceptions, states
from nestedflow.db.software_config import SoftwareConfigStore
from nestedflow.engine import scaling
from nestedflow.resources import base
from nestedflow.stacks.signals import SignalBox

#: Heat's hook types (heat/engine/environment.py HOOK_TYPES).
HOOK_TYPES = ("pre-create", "pre-update", "pre-delete",
              "post-create", "post-update", "post-delete")
#: Heat's Resource.no_signal_actions.
NO_SIGNAL_ACTIONS = (states.SUSPEND, states.DELETE)


def signal_key(context):
    """One key per request: a retried call is the same signal."""
    request_id = getattr(context, "request_id", None)
    return f"request:{request_id}" if request_id else f"signal:{uuid.uuid4()}"


def _details_reason(details):
    # Heat's Resource._handle_signal get_string_details.
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, dict) and all(k in details for k in ("previous", "current",
                                                                "reason")):
        return ("alarm state changed from "
                f"{details['previous']} to {details['current']} ({details['reason']})")
    return "Unknown"


def signal_resource(engine, stack_id, resource_name, details=None, context=None):
    db = engine.db
    stack = engine.stacks.live_stack(stack_id)
    row = next((r for r in db.list_resources(stack.id) if r.name == resource_name), None)
    if row is None:
        raise exceptions.ResourceNotFound(stack.name, resource_name)
    if isinstance(details, dict) and "unset_hook" in details:
        _unset_hook(engine, stack, row, details["unset_hook"])
        return
    plugin_cls = engine.registry.get(row.type)
    # Heat's per-type Resource.no_signal_actions (a software deployment
    # takes signals in every action: it may deploy on DELETE too).
    if row.action in getattr(plugin_cls, "no_signal_actions", NO_SIGNAL_ACTIONS):
        db.add_event(stack.id, row.name, row.action, row.status,
                     f"Cannot signal resource during {row.action}",
                     resource_id=row.id, physical_id=row.physical_id)
        raise exceptions.NotSupported(f"Signal resource during {row.action}")
    if not callable(getattr(plugin_cls, "handle_signal", None)):
        raise exceptions.ResourceActionNotSupported("signal", row.name, row.type)
    key = signal_key(context)
    signals = SignalBox(db, engine.events, stack.id, row, key=key)
    signals.scaler = scaling.scaler(engine, stack, key)
    plugin = plugin_cls(row.name, dict(row.properties_data or {}), _context(
        engine, stack, row, signals, context))
    try:
        reason = plugin.handle_signal(details)
    except exceptions.NoActionRequired:
        return  # Heat records no event: it would only spam the user
    except exceptions.NestedflowError:
        raise
    except Exception as error:
        raise exceptions.ResourceFailure(row.name, "SIGNAL", error) from error
    db.add_event(stack.id, row.name, "SIGNAL", row.status,
                 f"Signal: {reason}" if reason else _details_reason(details),
                 resource_id=row.id, physical_id=row.physical_id)
    engine.events.signalled(stack.id, row.name)


def _unset_hook(engine, stack, row, hook):
    if hook not in HOOK_TYPES:
        raise exceptions.InvalidBreakPointHook(
            f'Invalid hook type "{hook}" for {row.name}')
    if not engine.db.clear_hook(stack.id, row.name, hook):
        raise exceptions.InvalidBreakPointHook(
            f'The "{hook}" hook is not defined on {row.name}')
    engine.db.add_event(stack.id, row.name, row.action, row.status, f"Hook {hook} is cleared",
                        resource_id=row.id, physical_id=row.physical_id)
    engine.events.signalled(stack.id, row.name)


def _context(engine, stack, row, signals, request_context):
    data = (row.attr_data or {}).get("data") or {}
    return base.ActionContext(
        stack_id=stack.id, stack_name=stack.name, resource_id=row.id,
        resource_name=row.name, type_name=row.type,
        traversal_id=row.traversal_id or stack.current_traversal or "",
        create_key=f"{row.id}:{row.traversal_id}", store=engine.store,
        physical_id=row.physical_id, data=dict(data), signals=signals,
        children=None, request_context=request_context,
        software_configs=SoftwareConfigStore(engine.db), project_id=stack.project_id)
