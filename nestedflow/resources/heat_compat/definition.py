"""What a Heat plugin reads as ``self.t`` (Heat's
``rsrc_defn.ResourceDefinition``) and ``self.stack`` (Heat's ``Stack``):
the parts a resource plugin touches, over nestedflow's state."""

import math

from nestedflow.resources.heat_compat import properties as heat_properties


class ResourceDefinition:
    """A resource's definition with its property values resolved: Heat's
    frozen definition. ``properties(schema, context)`` gives a
    :class:`~nestedflow.resources.heat_compat.properties.Properties` over
    them; ``get`` answers the legacy ``json_snippet.get('Properties')``."""

    def __init__(self, name, resource_type, properties):
        self.name = name
        self.resource_type = resource_type
        self._properties = dict(properties or {})

    def properties(self, schema, context=None):
        return heat_properties.Properties(schema, self._properties, context=context)

    def freeze(self, **overrides):
        values = overrides.get("properties", self._properties)
        if isinstance(values, heat_properties.Properties):
            values = values.data
        return ResourceDefinition(self.name, self.resource_type, values)

    def get(self, key, default=None):
        return {"Properties": dict(self._properties), "Type": self.resource_type}.get(
            key, default)

    def deletion_policy(self):
        return "Delete"

    def update_policy(self, schema, context=None):
        return heat_properties.Properties(schema, {}, context=context)

    def metadata(self):
        return {}

    def external_id(self):
        return None

    def __eq__(self, other):
        return isinstance(other, ResourceDefinition) and (
            (self.resource_type, self._properties) == (other.resource_type, other._properties))

    __hash__ = None


class StackView:
    """``self.stack`` of a Heat plugin: the stack's id, name, request
    context and, while its template is validated, its timeout and resource
    names (``name in self.stack``)."""

    strict_validate = True

    def __init__(self, stack_id, name, context, timeout=None, resource_names=()):
        self.id = stack_id
        self.name = name
        self.context = context
        self.timeout_mins = timeout
        self._resource_names = frozenset(resource_names)

    def timeout_secs(self):
        """The stack's timeout in seconds: infinite for a stack without one
        (nestedflow has no default stack timeout; Heat's is an hour)."""
        return self.timeout_mins * 60 if self.timeout_mins else math.inf

    def __contains__(self, resource_name):
        return resource_name in self._resource_names

    def has_cache_data(self, resource_name):
        return False
