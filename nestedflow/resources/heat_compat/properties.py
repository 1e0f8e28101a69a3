"""Heat's ``heat.engine.properties``: ``Schema``, ``Property`` and the
``Properties`` mapping a plugin reads as ``self.properties``.

``Schema(data_type, description=None, default=None, schema=None,
required=False, constraints=None, implemented=True, update_allowed=False,
immutable=False, support_status=None, allow_conversion=False)`` is a
nestedflow property schema (:class:`nestedflow.properties.schema.Property`),
so the engine validates it like any other. ``implemented``, ``immutable``,
``support_status`` and ``allow_conversion`` are kept, not acted on.
"""

import collections.abc
import copy

from nestedflow import exceptions
from nestedflow.properties import schema as nf_schema
from nestedflow.resources.heat_compat import constraints as heat_constraints
from nestedflow.resources.heat_compat import translation as heat_translation


class Schema(heat_constraints.Schema, nf_schema.Property):

    def __init__(self, data_type, description=None, default=None, schema=None,
                 required=False, constraints=None, implemented=True, update_allowed=False,
                 immutable=False, support_status=None, allow_conversion=False):
        kind = self.nestedflow_type(data_type)
        if kind == nf_schema.Types.LIST and isinstance(schema, collections.abc.Mapping):
            # Heat's legacy form: a list whose items are maps of this schema.
            schema = Schema(nf_schema.Types.MAP, schema=schema)
        super().__init__(kind, description or "", required=required, default=default,
                         update_allowed=update_allowed, constraints=constraints or (),
                         schema=schema)
        self.implemented = implemented
        self.immutable = immutable
        self.support_status = support_status
        self.allow_conversion = allow_conversion


class Property:
    """Heat's ``Property(schema, name=None, context=None, path=None)``: one
    property's schema with Heat's accessors."""

    def __init__(self, schema, name=None, context=None, path=None):
        self.schema = schema
        self.name = name
        self.context = context
        self.path = path or name

    def required(self):
        return self.schema.required

    def implemented(self):
        return getattr(self.schema, "implemented", True)

    def update_allowed(self):
        return self.schema.update_allowed

    def immutable(self):
        return getattr(self.schema, "immutable", False)

    def has_default(self):
        return self.schema.default is not None

    def default(self):
        return copy.deepcopy(self.schema.default)

    def type(self):
        return self.schema.type

    def support_status(self):
        return getattr(self.schema, "support_status", None)

    def get_value(self, value, validate=False):
        """``value`` (or the default for None) converted to the schema's type;
        with ``validate``, its constraints checked too. Values another
        resource has not produced yet read as None, as in Heat's validation."""
        if value is None or value is nf_schema.UNRESOLVED:
            return self.default() if self.has_default() else None
        try:
            coerced = self.schema.coerce(value, self.path)
        except exceptions.StackValidationFailed as error:
            raise ValueError(error.reason) from None
        return _unresolved_as_none(coerced)


def _unresolved_as_none(value):
    if value is nf_schema.UNRESOLVED:
        return None
    if isinstance(value, dict):
        return {key: _unresolved_as_none(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unresolved_as_none(item) for item in value]
    return value


class Properties(collections.abc.Mapping):
    """Heat's ``Properties(schema, data=None, ...)``: reads the values of
    ``data`` through ``props`` (name -> :class:`Property`), which a plugin's
    ``reparse`` may change. Plain ``dict(properties)`` gives every value."""

    def __init__(self, schema, data=None, resolver=None, parent_name=None, context=None,
                 section=None, translation=None, rsrc_description=None):
        self.props = {name: Property(item, name, context) for name, item in schema.items()}
        self.data = dict(data or {})
        self.context = context
        self.translation = translation or heat_translation.Translation(self)
        self.rsrc_description = rsrc_description

    def update_translation(self, rules, client_resolve=True, ignore_resolve_error=False):
        """Apply the plugin's translation rules to the values (Heat's
        ``Properties.update_translation``, applied at once)."""
        self.translation = heat_translation.Translation(self)
        self.translation.set_rules(rules, client_resolve=client_resolve,
                                   ignore_resolve_error=ignore_resolve_error)
        self.data = self.translation.apply(self.data)

    def _get_property_value(self, key, validate=False):
        if key not in self.props:
            raise KeyError(f"Invalid Property {key}")
        prop = self.props[key]
        value = self.data.get(key)
        if value is None and not prop.has_default() and prop.required() and (
                key not in self.data):
            raise ValueError(f"Property {key} not assigned")
        return prop.get_value(value, validate)

    def __getitem__(self, key):
        return self._get_property_value(key)

    def get_user_value(self, key, validate=False):
        return self._get_property_value(key, validate)

    def __len__(self):
        return len(self.props)

    def __contains__(self, key):
        return key in self.props

    def __iter__(self):
        return iter(self.props)

    def validated(self, path):
        """The values checked against the current ``props``: converted, with
        defaults filled in; raises StackValidationFailed naming ``path.key``."""
        schema = {name: prop.schema for name, prop in self.props.items()}
        return nf_schema.validate_properties(schema, self.data, path)

    def validate(self, with_value=True):
        """Heat's check: unknown keys, required ones, types and constraints."""
        self.validated("properties")
