"""Constraints on parameter and property values (HOT ``constraints:`` syntax).

Each constraint has a ``description`` that never contains the checked value (so
it is safe to show for hidden parameters) and a ``validate(value)`` that raises
``ValueError`` with a message naming what went wrong.
"""

import numbers
import re

from oslo_log import log as logging

from nestedflow.conf import CONF
from nestedflow.constraints import registry
from nestedflow.exceptions import StackValidationFailed

LOG = logging.getLogger(__name__)


def _is_number(value):
    # bool is an int subclass, but True is not a sensible number for a range check.
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _bounds_text(low, high, unit=""):
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"between {low} and {high}{suffix}"
    if low is not None:
        return f"at least {low}{suffix}"
    return f"at most {high}{suffix}"


class Constraint:
    """Base class: subclasses set ``key`` and implement ``_default_description``
    and ``_failure`` (the message for a value that does not satisfy them, or None)."""

    key = None

    def __init__(self, description=None):
        self.custom_description = description

    @property
    def description(self):
        """Custom text from the template if any, else a generic value-free text."""
        return self.custom_description or self._default_description()

    def validate(self, value):
        """Raise ValueError if ``value`` does not satisfy the constraint."""
        failure = self._failure(value)
        if failure is not None:
            raise ValueError(self.custom_description or failure)

    def _default_description(self):
        raise NotImplementedError

    def _failure(self, value):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.description!r}>"


class Length(Constraint):
    """Length of a string (characters) or of a list / map (items)."""

    key = "length"

    def __init__(self, min=None, max=None, description=None):
        super().__init__(description)
        if min is None and max is None:
            raise ValueError("length constraint needs min or max")
        for bound in (min, max):
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
                raise ValueError(f"length bound must be an integer, got {bound!r}")
        if min is not None and max is not None and min > max:
            raise ValueError(f"length min {min} is greater than max {max}")
        self.min = min
        self.max = max

    def _default_description(self):
        return f"length must be {_bounds_text(self.min, self.max, 'characters')}"

    def _failure(self, value):
        try:
            size = len(value)
        except TypeError:
            return f"length constraint cannot apply to {value!r}"
        if (self.min is not None and size < self.min) or (self.max is not None and size > self.max):
            unit = "characters" if isinstance(value, str) else "items"
            return f"length must be {_bounds_text(self.min, self.max, unit)}"
        return None


class Range(Constraint):
    """Numeric bounds, inclusive."""

    key = "range"

    def __init__(self, min=None, max=None, description=None):
        super().__init__(description)
        if min is None and max is None:
            raise ValueError("range constraint needs min or max")
        for bound in (min, max):
            if bound is not None and not _is_number(bound):
                raise ValueError(f"range bound must be a number, got {bound!r}")
        if min is not None and max is not None and min > max:
            raise ValueError(f"range min {min} is greater than max {max}")
        self.min = min
        self.max = max

    def _default_description(self):
        return f"must be {_bounds_text(self.min, self.max)}"

    def _failure(self, value):
        if not _is_number(value):
            return f"{value!r} is not a number"
        if (self.min is not None and value < self.min) or (
            self.max is not None and value > self.max
        ):
            return f"{value!r} {self._default_description()}"
        return None


class AllowedValues(Constraint):
    """Value (or, for a list, every item) must be one of ``values``."""

    key = "allowed_values"

    def __init__(self, values, description=None):
        super().__init__(description)
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
            raise ValueError(f"allowed_values must be a list, got {values!r}")
        self.values = list(values)

    def _default_description(self):
        return f"must be one of {self.values!r}"

    def _failure(self, value):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item not in self.values:
                return f"{item!r} is not in the allowed values {self.values!r}"
        return None


class AllowedPattern(Constraint):
    """String must match the regular expression as a whole (like Heat)."""

    key = "allowed_pattern"

    def __init__(self, pattern, description=None):
        super().__init__(description)
        if not isinstance(pattern, str):
            raise ValueError(f"allowed_pattern must be a string, got {pattern!r}")
        try:
            self._regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid allowed_pattern {pattern!r}: {exc}") from None
        self.pattern = pattern

    def _default_description(self):
        return f"must match pattern {self.pattern!r}"

    def _failure(self, value):
        if not isinstance(value, str):
            return f"{value!r} is not a string"
        if self._regex.fullmatch(value) is None:
            return f"{value!r} does not match pattern {self.pattern!r}"
        return None


class Modulo(Constraint):
    """``value % step == offset``."""

    key = "modulo"

    def __init__(self, step, offset=0, description=None):
        super().__init__(description)
        for bound in (step, offset):
            if not isinstance(bound, int) or isinstance(bound, bool):
                raise ValueError(f"modulo step and offset must be integers, got {bound!r}")
        if step == 0:
            raise ValueError("modulo step must not be 0")
        if not 0 <= offset < abs(step):
            raise ValueError(f"modulo offset {offset} must be in [0, {abs(step)})")
        self.step = step
        self.offset = offset

    def _default_description(self):
        return f"must be a multiple of {self.step} with an offset of {self.offset}"

    def _failure(self, value):
        if not _is_number(value):
            return f"{value!r} is not a number"
        if value % self.step != self.offset:
            return f"{value!r} {self._default_description()}"
        return None


class Custom(Constraint):
    """``custom_constraint: NAME``: a plugin of the entry-point group
    ``nestedflow.constraints`` (Heat's CustomConstraint over ``heat.constraints``).

    With no such plugin installed the constraint checks nothing and a
    warning is logged, unless ``[constraints] refuse_unknown_custom_constraints``
    is set; then the template is refused.
    """

    key = "custom_constraint"

    def __init__(self, name, description=None):
        super().__init__(description)
        self.name = name
        self.plugin = registry.get(name)

    def _default_description(self):
        plugin_text = getattr(self.plugin, "description", None)
        if plugin_text:
            return f"Value must be {plugin_text}"
        return f"Value must be of type {self.name}"

    def _failure(self, value):
        if self.plugin is None:
            return None
        # A list parameter (comma_delimited_list) is checked item by item.
        for item in value if isinstance(value, list) else [value]:
            try:
                self.plugin.validate(item)
            except (ValueError, TypeError) as exc:
                return f"Error validating value {item!r}: {exc}"
        return None


_warned = set()


def _build_custom(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"custom_constraint needs a constraint name, got {name!r}")
    if registry.get(name) is None:
        reason = registry.broken(name) or "no plugin of that name is installed"
        if CONF.constraints.refuse_unknown_custom_constraints:
            raise ValueError(f"unknown custom constraint {name!r}: {reason}")
        if name not in _warned:  # once per process: templates are validated often
            _warned.add(name)
            LOG.warning("custom constraint %r is not checked: %s", name, reason)
    return lambda description: Custom(name, description=description)


def _build_length_or_range(cls, args):
    if not isinstance(args, dict):
        raise ValueError(f"{cls.key} needs a mapping with min and/or max, got {args!r}")
    unknown = set(args) - {"min", "max"}
    if unknown:
        raise ValueError(f"{cls.key} accepts only min and max, got {sorted(unknown)}")
    return lambda description: cls(args.get("min"), args.get("max"), description=description)


def _build_modulo(args):
    if not isinstance(args, dict) or set(args) != {"step", "offset"}:
        raise ValueError(f"modulo needs a mapping with step and offset, got {args!r}")
    return lambda description: Modulo(args["step"], args["offset"], description=description)


_BUILDERS = {
    Length.key: lambda args: _build_length_or_range(Length, args),
    Range.key: lambda args: _build_length_or_range(Range, args),
    AllowedValues.key: lambda args: lambda d: AllowedValues(args, description=d),
    AllowedPattern.key: lambda args: lambda d: AllowedPattern(args, description=d),
    Modulo.key: _build_modulo,
    Custom.key: _build_custom,
}

CONSTRAINT_KEYS = frozenset(_BUILDERS)


def from_hot(items, path):
    """Build constraint objects from a HOT ``constraints:`` list.

    ``path`` is the location of the list itself (e.g. ``parameters.port.constraints``);
    errors name the offending entry as ``path[i]``.
    """
    if items is None:
        return []
    if not isinstance(items, list):
        raise StackValidationFailed(f"constraints must be a list, got {items!r}", path=path)
    built = []
    for index, item in enumerate(items):
        item_path = f"{path}[{index}]"
        if not isinstance(item, dict):
            raise StackValidationFailed(
                f"constraint must be a mapping, got {item!r}", path=item_path
            )
        description = item.get("description")
        if description is not None and not isinstance(description, str):
            raise StackValidationFailed("description must be a string", path=item_path)
        kinds = [k for k in item if k != "description"]
        unknown = [k for k in kinds if k not in _BUILDERS]
        if unknown:
            raise StackValidationFailed(
                f"unknown constraint {unknown[0]!r}; expected one of {sorted(_BUILDERS)}",
                path=item_path,
            )
        if len(kinds) != 1:
            raise StackValidationFailed(
                f"each constraint entry needs exactly one of {sorted(_BUILDERS)}",
                path=item_path,
            )
        kind = kinds[0]
        try:
            built.append(_BUILDERS[kind](item[kind])(description))
        except ValueError as exc:
            raise StackValidationFailed(str(exc), path=f"{item_path}.{kind}") from None
    return built
