"""What an update does to one existing resource: keep, update in place, replace
or create.

One decision, asked by the update's converge task before it acts and by
the update preview (:mod:`nestedflow.engine.previews`), so a preview says
what the update then does.
"""

import hashlib
import json

from nestedflow import states
from nestedflow.template import environment, loader

#: The resource has no physical object (never created, or deleted): create one.
CREATE = "create"
#: A new physical object first; the old one is deleted in cleanup.
REPLACE = "replace"
#: The plugin's ``update`` in place.
UPDATE = "update"
#: Nothing to do (dependents still get its data).
UNCHANGED = "unchanged"


def decide(registry, row, new_type, properties, fingerprint):
    """The change converging ``row`` to the template's ``new_type`` with
    resolved ``properties`` (and the type's ``fingerprint`` of them) makes.

    As Heat's convergence: a resource whose last action failed (or that was
    marked unhealthy) is replaced, as is one whose type changed or whose
    changed properties do not allow an update; the plugin may ask for a
    replacement of a change it cannot make in place
    (:meth:`~nestedflow.resources.base.Resource.needs_replace_with_prop_diff`).
    """
    if row.action == states.INIT or (row.action, row.status) == (states.DELETE,
                                                                 states.COMPLETE):
        return CREATE
    if row.type != new_type:
        return REPLACE
    plugin_cls = registry.get(row.type)
    if row.status != states.COMPLETE:
        # Heat's StackResource._needs_update never replaces a nested stack
        # whose update failed or was cut short (a superseded child update,
        # a conductor cut off): it issues the nested update again, which
        # converges whatever the last one left
        # (heat/engine/resources/stack_resource.py).
        if (plugin_cls.waits_for_stacks and row.physical_id
                and row.action == states.UPDATE):
            return UPDATE
        return REPLACE
    if plugin_cls.replace_on_every_update:
        return REPLACE
    old = row.properties_data or {}
    changed = {k for k in set(old) | set(properties) if old.get(k) != properties.get(k)}
    schema = plugin_cls.properties_schema or {}
    # Heat's update_allowed_properties: names allowed besides the schema's.
    allowed = set(getattr(plugin_cls, "update_allowed_properties", ()))
    if any(k in schema and not schema[k].update_allowed and k not in allowed
           for k in changed):
        return REPLACE
    if not changed and (row.attr_data or {}).get("fingerprint") == fingerprint:
        return UNCHANGED
    if plugin_cls.needs_replace_with_prop_diff(changed, properties, old):
        return REPLACE
    return UPDATE


def fingerprint(registry, type_name, properties, template, resource_name):
    """What :func:`decide` compares besides the properties, for resource
    ``resource_name`` of ``template`` (a parsed Template): the type's own
    (``Resource.fingerprint`` of the files map) and, for a resource that is
    a stack, the environment its child inherits -- a changed
    ``parameter_defaults`` or registry entry updates the child, as Heat
    updates a nested stack on every update (StackResource._needs_update)."""
    plugin_cls = registry.get(type_name)
    files = template.files or {}
    own = plugin_cls.fingerprint(properties, files, type_name)
    if not plugin_cls.waits_for_stacks:
        return own
    inherited = environment.child_environment(template.environment, resource_name)
    # Files the inherited registry maps types to are read by the child too.
    registered = {name: files[name] for name in sorted(loader.files_reached(
        inherited.get(environment.RESOURCE_REGISTRY) or {}, files))}
    return hashlib.sha256(json.dumps([own, inherited, registered], sort_keys=True,
                                     default=str).encode()).hexdigest()
