"""Heat's ``heat.engine.constraints``: the schema base class with Heat's
key and type names (``Schema.TYPE``, ``Schema.STRING`` = ``'String'``...),
and the constraints Length, Range, AllowedValues, AllowedPattern, Modulo
(nestedflow's own, same arguments) and CustomConstraint, checked by a
validator the host registers."""

from nestedflow.properties import schema as nf_schema
from nestedflow.properties.constraints import (  # noqa: F401 - re-exported
    AllowedPattern,
    AllowedValues,
    Constraint,
    Length,
    Modulo,
    Range,
)

#: Custom constraint name -> callable(value) returning True when valid.
_CUSTOM = {}


class Schema:
    """Heat's ``constraints.Schema`` names, shared by property, attribute and
    parameter schemas. A schema takes Heat's type names or nestedflow's
    (``'String'`` or ``'string'``); nestedflow's spelling is stored."""

    KEYS = (TYPE, DESCRIPTION, DEFAULT, SCHEMA, REQUIRED, CONSTRAINTS) = (
        "type", "description", "default", "schema", "required", "constraints")
    TYPES = (INTEGER, STRING, NUMBER, BOOLEAN, MAP, LIST, ANY) = (
        "Integer", "String", "Number", "Boolean", "Map", "List", "Any")

    @staticmethod
    def nestedflow_type(data_type):
        """nestedflow's spelling of ``data_type`` (Heat's or its own)."""
        if data_type is None:
            return nf_schema.Types.ANY
        spelled = str(data_type).lower()
        if spelled not in nf_schema.Types.ALL:
            raise ValueError(f"unknown schema type {data_type!r}")
        return spelled


def register_custom_constraint(name, validator):
    """Let ``CustomConstraint(name)`` check values with ``validator(value)``."""
    _CUSTOM[name] = validator


class CustomConstraint(Constraint):
    """Heat's named constraint (``nova.flavor``...). One the host did not
    register accepts every value: validating it would need the host's clouds."""

    def __init__(self, name, description=None, environment=None):
        self.name = name
        super().__init__(description)

    def _default_description(self):
        return f"must satisfy {self.name}"

    def _failure(self, value):
        validator = _CUSTOM.get(self.name)
        if validator is None or validator(value):
            return None
        return f"{value!r} does not satisfy {self.name}"
