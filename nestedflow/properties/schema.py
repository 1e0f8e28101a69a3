"""Property and attribute schemas that resource plugins declare.

A plugin class sets ``properties_schema = {name: Property(...)}`` and
``attributes_schema = {name: Attribute(...)}``; the validator and the engine
use :func:`validate_properties` to check and coerce a resource's properties.
"""

import copy
import dataclasses
import math
from collections.abc import Mapping

from nestedflow.exceptions import StackValidationFailed


class Types:
    """Property value types."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    MAP = "map"
    LIST = "list"
    ANY = "any"

    ALL = frozenset({STRING, INTEGER, NUMBER, BOOLEAN, MAP, LIST, ANY})


class _Unresolved:
    """Singleton type of :data:`UNRESOLVED`."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "<unresolved>"

    # Copies must stay the same object so ``is UNRESOLVED`` keeps working.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_Unresolved, ())


UNRESOLVED = _Unresolved()
"""A value that comes from another resource and is unknown until run time."""

_TRUE_STRINGS = frozenset({"true", "yes", "1", "on", "t", "y"})
_FALSE_STRINGS = frozenset({"false", "no", "0", "off", "f", "n"})


def contains_unresolved(value):
    """True if ``value`` is UNRESOLVED or a list/map holding it at any depth."""
    # Iterative so deeply nested data cannot hit the recursion limit.
    pending = [value]
    while pending:
        item = pending.pop()
        if item is UNRESOLVED:
            return True
        if isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return False


def parse_string(value):
    """Return ``value`` as a string (booleans as Heat spells them, numbers
    as written), or raise ValueError for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise ValueError(value)


def coerce_scalar(kind, value):
    """``value`` as a ``"string"``, ``"number"`` or ``"boolean"``: the one
    conversion of property and parameter values. Raises ValueError
    ("expected <kind>")."""
    try:
        return _SCALAR_PARSERS[kind](value)
    except ValueError:
        raise ValueError(f"expected {kind}") from None


def parse_boolean(value):
    """Return the bool that ``value`` spells, or raise ValueError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE_STRINGS:
            return True
        if text in _FALSE_STRINGS:
            return False
    raise ValueError(value)


def parse_number(value):
    """Return an int or float for a number or numeric string, or raise ValueError."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        try:
            number = int(text)
        except ValueError:
            number = float(text)
    else:
        raise ValueError(value)
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(value)
    return number


_SCALAR_PARSERS = {Types.STRING: parse_string, Types.NUMBER: parse_number,
                   Types.BOOLEAN: parse_boolean}


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_error(expected, value, path):
    return StackValidationFailed(f"expected {expected}, got {_short(value)}", path=path)


class Property:
    """Schema of one property.

    ``schema`` describes the contents of a LIST (one element ``Property``) or a
    MAP (dict of key -> ``Property``; None means a free-form map).
    ``constraints`` are objects from :mod:`nestedflow.properties.constraints`.
    """

    def __init__(
        self,
        type,
        description="",
        required=False,
        default=None,
        update_allowed=False,
        constraints=(),
        schema=None,
    ):
        if type not in Types.ALL:
            raise ValueError(f"unknown property type {type!r}")
        if schema is not None:
            if type == Types.LIST and not isinstance(schema, Property):
                raise ValueError("a list schema must be a Property")
            if type == Types.MAP and not isinstance(schema, Mapping):
                raise ValueError("a map schema must be a dict of Property")
            if type not in (Types.LIST, Types.MAP):
                raise ValueError(f"schema is only meaningful for list and map, not {type}")
        self.type = type
        self.description = description
        self.required = required
        self.default = default
        self.update_allowed = update_allowed
        self.constraints = tuple(constraints)
        self.schema = schema

    def __repr__(self):
        return f"<Property {self.type} required={self.required} default={self.default!r}>"

    def coerce(self, value, path):
        """Return ``value`` converted to this property's type, then check constraints.

        Values that are (or contain) UNRESOLVED are returned unchecked: their
        real value is only known at run time.
        """
        if contains_unresolved(value):
            return value
        coerced = self._coerce_type(value, path)
        for constraint in self.constraints:
            try:
                constraint.validate(coerced)
            except ValueError as exc:
                raise StackValidationFailed(str(exc), path=path) from None
        return coerced

    def _coerce_type(self, value, path):
        kind = self.type
        if kind == Types.ANY:
            return value
        if kind in _SCALAR_PARSERS:
            try:
                return coerce_scalar(kind, value)
            except ValueError:
                raise _type_error(kind, value, path) from None
        if kind == Types.INTEGER:
            try:
                number = parse_number(value)
            except ValueError:
                raise _type_error("integer", value, path) from None
            if isinstance(number, float):
                if not number.is_integer():
                    raise _type_error("integer", value, path)
                number = int(number)
            return number
        if kind == Types.LIST:
            if not isinstance(value, (list, tuple)):
                raise _type_error("list", value, path)
            if self.schema is None:
                return list(value)
            return [self.schema.coerce(item, f"{path}[{i}]") for i, item in enumerate(value)]
        # Types.MAP
        if not isinstance(value, Mapping):
            raise _type_error("map", value, path)
        if self.schema is None:
            return dict(value)
        return validate_properties(self.schema, value, path)


class Attribute:
    """Schema of one attribute a resource exposes to ``get_attr``."""

    def __init__(self, description="", type=Types.ANY):
        if type not in Types.ALL:
            raise ValueError(f"unknown attribute type {type!r}")
        self.description = description
        self.type = type

    def __repr__(self):
        return f"<Attribute {self.type}>"


def validate_properties(schema, values, path):
    """Check ``values`` against ``schema`` and return the coerced properties.

    The result has every schema key: absent (or null) values take the default,
    or None when there is none. Errors name ``path.key``.
    """
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise StackValidationFailed(
            f"properties must be a mapping, got {_short(values)}", path=path
        )
    for key in values:
        if key not in schema:
            raise StackValidationFailed("unknown property", path=f"{path}.{key}")
    result = {}
    for name, prop in schema.items():
        prop_path = f"{path}.{name}"
        value = values.get(name)
        if value is None:
            if prop.default is not None:
                # Defaults are shared class data: never hand out the same object twice.
                value = copy.deepcopy(prop.default)
            elif prop.required:
                raise StackValidationFailed("property is required", path=prop_path)
            else:
                result[name] = None
                continue
        result[name] = prop.coerce(value, prop_path)
    return result


@dataclasses.dataclass(frozen=True)
class StackSummary:
    """What :meth:`Resource.validate_resource` may know of the stack whose
    template is being validated (None where it is not known yet)."""

    name: str | None = None
    id: str | None = None
    #: The stack's timeout in minutes; None: no timeout.
    timeout: int | None = None
    resource_names: frozenset = frozenset()
