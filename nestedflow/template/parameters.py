"""The HOT ``parameters`` section: schemas, value resolution and redaction."""

import json
from collections.abc import Mapping
from dataclasses import dataclass

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties import constraints as constr
from nestedflow.properties.schema import coerce_scalar, parse_boolean
from nestedflow.template import limits

STRING = "string"
NUMBER = "number"
BOOLEAN = "boolean"
JSON = "json"
COMMA_DELIMITED_LIST = "comma_delimited_list"

# Which constraint kinds make sense for which parameter type (as in Heat).
# custom_constraint applies where Heat's CustomConstraint.valid_types allow.
_ALLOWED_CONSTRAINTS = {
    STRING: {"length", "allowed_values", "allowed_pattern", "custom_constraint"},
    NUMBER: {"range", "allowed_values", "modulo", "custom_constraint"},
    BOOLEAN: {"allowed_values", "custom_constraint"},
    JSON: {"length"},
    COMMA_DELIMITED_LIST: {"length", "allowed_values", "custom_constraint"},
}
PARAMETER_TYPES = frozenset(_ALLOWED_CONSTRAINTS)

_KEYS = frozenset(
    {"type", "default", "description", "label", "hidden", "constraints", "immutable", "tags"}
)

REDACTED = "******"


@dataclass(frozen=True)
class ParameterSchema:
    """One declared parameter. ``default`` is already coerced to ``type``."""

    name: str
    type: str
    default: object
    hidden: bool
    description: str
    label: str
    constraints: tuple
    has_default: bool


def coerce(param_type, value):
    """Convert ``value`` to ``param_type``; raise ValueError with a short reason."""
    if param_type in (STRING, NUMBER, BOOLEAN):
        return coerce_scalar(param_type, value)
    if param_type == JSON:
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"not valid JSON ({exc})") from None
        if isinstance(value, (Mapping, list)):
            return value
        raise ValueError("expected a JSON map or list")
    # COMMA_DELIMITED_LIST
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str):
        if not value.strip():
            return []
        return [item.strip() for item in value.split(",")]
    raise ValueError("expected a comma-delimited list")


def _describe(value, hidden):
    return "" if hidden else f", got {value!r}"


def _parse_one(name, spec):
    path = f"parameters.{name}"
    if not isinstance(spec, Mapping):
        raise StackValidationFailed("parameter must be a mapping", path=path)
    for key in spec:
        if key not in _KEYS:
            raise StackValidationFailed(
                f"unknown key; expected one of {sorted(_KEYS)}", path=f"{path}.{key}"
            )
    param_type = spec.get("type")
    if param_type is None:
        raise StackValidationFailed("parameter needs a type", path=path)
    if not isinstance(param_type, str) or param_type not in PARAMETER_TYPES:
        raise StackValidationFailed(
            f"unknown type {param_type!r}; expected one of {sorted(PARAMETER_TYPES)}",
            path=f"{path}.type",
        )
    try:
        hidden = parse_boolean(spec.get("hidden", False))
    except ValueError:
        raise StackValidationFailed("hidden must be a boolean", path=f"{path}.hidden") from None
    for key in ("description", "label"):
        if not isinstance(spec.get(key, ""), str):
            raise StackValidationFailed(f"{key} must be a string", path=f"{path}.{key}")
    built = constr.from_hot(spec.get("constraints"), f"{path}.constraints")
    for index, constraint in enumerate(built):
        if constraint.key not in _ALLOWED_CONSTRAINTS[param_type]:
            raise StackValidationFailed(
                f"{constraint.key} constraint does not apply to a {param_type} parameter",
                path=f"{path}.constraints[{index}]",
            )
    has_default = "default" in spec and spec["default"] is not None
    default = None
    if has_default:
        try:
            default = coerce(param_type, spec["default"])
        except ValueError as exc:
            raise StackValidationFailed(
                f"{exc}{_describe(spec['default'], hidden)}", path=f"{path}.default"
            ) from None
        # Heat checks the default against the constraints even when a value
        # is given (parameters.Schema._validate_default), custom ones aside.
        for constraint in built:
            if constraint.key == constr.Custom.key:
                continue
            try:
                constraint.validate(default)
            except ValueError as exc:
                detail = constraint.description if hidden else str(exc)
                shown = "" if hidden else f" {spec['default']!r}"
                raise StackValidationFailed(f"Invalid default{shown} ({detail})",
                                            path=f"{path}.default") from None
    return ParameterSchema(
        name=name,
        type=param_type,
        default=default,
        hidden=hidden,
        description=spec.get("description", ""),
        label=spec.get("label", ""),
        constraints=tuple(built),
        has_default=has_default,
    )


def parse_parameters(section):
    """Return ``{name: ParameterSchema}`` for a HOT ``parameters`` section."""
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise StackValidationFailed("parameters must be a mapping", path="parameters")
    return {str(name): _parse_one(str(name), spec) for name, spec in section.items()}


def _check_value(schema, raw, path):
    try:
        value = coerce(schema.type, raw)
    except ValueError as exc:
        raise StackValidationFailed(f"{exc}{_describe(raw, schema.hidden)}", path=path) from None
    for constraint in schema.constraints:
        try:
            constraint.validate(value)
        except ValueError as exc:
            if schema.hidden:
                message = constraint.description
            elif constraint.custom_description:
                message = f"{exc} (value {value!r})"
            else:
                message = str(exc)
            raise StackValidationFailed(message, path=path) from None
    return value


def resolve_parameters(template, values=None, pseudo=None):
    """Return ``{name: value}`` for every declared parameter plus ``pseudo`` ones.

    Precedence, lowest first (Heat's): template default < environment
    ``parameter_defaults`` < environment ``parameters`` < explicit ``values``.
    ``parameter_defaults`` may name parameters the template does not declare
    (they are meant for nested templates); the other two may not.
    """
    schemas = template.parameters
    environment = template.environment or {}
    env_values = environment.get("parameters") or {}
    env_defaults = environment.get("parameter_defaults") or {}
    values = dict(values or {})
    for name in values:
        if name not in schemas:
            raise StackValidationFailed("unknown parameter", path=f"parameters.{name}")
    for name in env_values:
        if name not in schemas:
            raise StackValidationFailed("unknown parameter", path=f"environment.parameters.{name}")
    resolved = {}
    for name, schema in schemas.items():
        path = f"parameters.{name}"
        for source in (values, env_values, env_defaults):
            if source.get(name) is not None:
                raw = source[name]
                break
        else:
            if not schema.has_default:
                raise StackValidationFailed("value is required", path=path)
            raw = schema.default
        limits.check_parameter_value(raw, path)
        resolved[name] = _check_value(schema, raw, path)
    # Pseudo parameters (OS::stack_name ...) are reserved names and win.
    resolved.update(pseudo or {})
    return resolved


def redact(template, resolved):
    """Return a copy of ``resolved`` with hidden parameters masked for display."""
    result = dict(resolved)
    for name, schema in template.parameters.items():
        if schema.hidden and name in result:
            result[name] = REDACTED
    return result
