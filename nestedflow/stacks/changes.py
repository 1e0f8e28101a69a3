"""What an update does to one existing resource: keep, update in place, replace
or create.

One decision, asked by the update's converge task before it acts and by
the update preview (:mod:`nestedflow.engine.previews`), so a preview says
what the update then does.
"""

from nestedflow import states

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
