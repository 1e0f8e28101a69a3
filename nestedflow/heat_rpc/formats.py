"""Heat's result shapes (heat/engine/api.py ``format_*``, keys of heat/rpc/api.py)
built from nestedflow's views."""

import datetime

import yaml

STACK_EVENT_TYPE = "OS::Heat::Stack"


def isotime(value):
    """Heat's ``heat.common.timeutils.isotime``: ``YYYY-MM-DDTHH:MM:SSZ`` (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def identity(stack, path=""):
    """Heat's identity dict (heat/common/identifier.py ``HeatIdentifier``)."""
    return {"tenant": stack.project_id or "", "stack_name": stack.name,
            "stack_id": stack.id, "path": path}


def resource_identity(stack, name):
    return identity(stack, f"/resources/{name}")


def parsed(template):
    """A stored template as a mapping (it may have been given as YAML text)."""
    if isinstance(template, str):
        loaded = yaml.safe_load(template)
        return loaded if isinstance(loaded, dict) else {}
    return template or {}


def _section(template, *names):
    for name in names:
        value = template.get(name)
        if isinstance(value, dict):
            return value
    return {}


def stack_parameters(stack, template, environment):
    """Heat's ``stack.parameters.map(str)``: every declared parameter's value
    (hidden ones as ``******``) and the pseudo parameters."""
    given = dict((environment or {}).get("parameter_defaults") or {})
    given.update((environment or {}).get("parameters") or {})
    result = {}
    for name, schema in _section(template, "parameters", "Parameters").items():
        schema = schema if isinstance(schema, dict) else {}
        value = given.get(name, schema.get("default", schema.get("Default")))
        hidden = str(schema.get("hidden", schema.get("NoEcho", ""))).lower() == "true"
        result[name] = "******" if hidden else ("" if value is None else str(value))
    result.update({"OS::stack_name": stack.name, "OS::stack_id": stack.id,
                   "OS::project_id": stack.project_id or ""})
    return result


def description(template):
    return template.get("description", template.get("Description", "")) or ""


def output_entries(stack, template, resolve=True):
    """Heat's ``format_stack_outputs``, in the template's order."""
    result = []
    errors = stack.output_errors or {}
    for name, definition in _section(template, "outputs", "Outputs").items():
        definition = definition if isinstance(definition, dict) else {}
        text = definition.get("description", definition.get("Description"))
        entry = {"output_key": name,
                 "description": "No description given" if text is None else text}
        if resolve:
            entry["output_value"] = stack.outputs.get(name)
            if name in errors:
                entry["output_error"] = errors[name]
        result.append(entry)
    return result


def stack_summary(stack):
    """Heat's ``format_stack_db_object`` (what a stack list shows)."""
    return {
        "stack_identity": identity(stack),
        "stack_name": stack.name,
        "description": "",
        "stack_action": stack.action,
        "stack_status": stack.status,
        "stack_status_reason": stack.status_reason,
        "creation_time": isotime(stack.created_at),
        "updated_time": isotime(stack.updated_at),
        "deletion_time": isotime(getattr(stack, "deleted_at", None)),
        "stack_owner": None,
        "parent": stack.parent_id,
        "stack_user_project_id": None,
        "tags": list(stack.tags) or None,
    }


def stack_detail(stack, template, environment, resolve_outputs=True):
    """Heat's ``format_stack``."""
    template = parsed(template)
    text = description(template)
    info = stack_summary(stack)
    info.update({
        "notification_topics": [],
        "parameters": stack_parameters(stack, template, environment),
        "description": text,
        "template_description": text,
        "capabilities": [],
        "disable_rollback": stack.disable_rollback,
        "timeout_mins": stack.timeout,
        "tags": list(stack.tags) or None,
    })
    if resolve_outputs and not (stack.action == "DELETE" and stack.status == "COMPLETE"):
        info["outputs"] = output_entries(stack, template)
    return info


def resource(res, stack, template=None, attributes=None, with_props=False):
    """Heat's ``format_stack_resource``: detailed when ``template`` is given."""
    updated = isotime(res.updated_at)
    result = {
        "updated_time": updated,
        "creation_time": updated,
        "resource_name": res.name,
        "physical_resource_id": res.physical_id or "",
        "resource_action": res.action,
        "resource_status": res.status,
        "resource_status_reason": res.status_reason,
        "resource_type": res.type,
        "resource_identity": resource_identity(stack, res.name),
        "stack_identity": identity(stack),
        "stack_name": stack.name,
        "required_by": required_by(parsed(template), res.name) if template else [],
    }
    if template is not None:
        definition = _section(parsed(template), "resources", "Resources").get(res.name) or {}
        result["description"] = definition.get("description", "") or ""
        result["metadata"] = metadata(template, res.name)
        if attributes is not None:
            result["attributes"] = attributes
    if with_props:
        result["properties"] = dict(res.properties)
    return result


def metadata(template, name):
    """The ``metadata`` of resource ``name`` in a stored template (HOT's or
    CFN's key), ``{}`` when it has none: Heat's RES_METADATA."""
    definition = _section(parsed(template), "resources", "Resources").get(name) or {}
    return definition.get("metadata", definition.get("Metadata")) or {}


def attributes(engine, stack_id, name, with_attr=None, context=None):
    """Heat's ``format_resource_attributes``: every attribute of the
    resource's type, and those of ``with_attr`` the schema lacks (None
    where one cannot be read), from the engine's resource_attributes."""
    found = engine.resource_attributes(stack_id, name, context=context)
    extra = [attr for attr in with_attr or () if attr not in found]
    if extra:
        found.update(engine.resource_attributes(stack_id, name, names=extra, context=context))
    return found


def required_by(template, name):
    """The resources of ``template`` that depend on ``name`` (depends_on,
    get_resource, get_attr, Ref, Fn::GetAtt)."""
    result = []
    for other, definition in _section(template, "resources", "Resources").items():
        if other != name and _refers_to(definition, name):
            result.append(other)
    return result


def _refers_to(node, name):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("depends_on", "DependsOn"):
                targets = value if isinstance(value, list) else [value]
                if name in targets:
                    return True
            elif key in ("get_resource", "Ref") and value == name:
                return True
            elif key in ("get_attr", "Fn::GetAtt") and isinstance(value, list) and value \
                    and value[0] == name:
                return True
            if _refers_to(value, name):
                return True
    elif isinstance(node, list):
        return any(_refers_to(item, name) for item in node)
    return False


def event(ev, stack, resource_type, resource_properties=None):
    """Heat's ``format_event``; the stack's own events name the stack and
    carry its id as the physical id (what ``--wait`` looks for)."""
    stack_event = resource_type == STACK_EVENT_TYPE
    result = {
        "event_identity": identity(stack, f"/resources/{ev.resource_name}/events/{ev.id}"),
        "stack_identity": identity(stack),
        "stack_name": stack.name,
        "event_time": isotime(ev.timestamp),
        "resource_name": ev.resource_name,
        "physical_resource_id": stack.id if stack_event else (ev.physical_id or ""),
        "resource_action": ev.action,
        "resource_status": ev.status,
        "resource_status_reason": ev.status_reason,
        "resource_type": resource_type,
    }
    if resource_properties is not None:
        result["resource_properties"] = resource_properties
    return result


def snapshot(data):
    """Heat's ``format_snapshot`` (times as Heat's)."""
    result = dict(data)
    result["creation_time"] = isotime(result.get("creation_time"))
    result.setdefault("action", "SNAPSHOT")
    return result
