"""Heat's ``heat.engine.constraints``: Length, Range, AllowedValues,
AllowedPattern, Modulo (nestedflow's own, same arguments) and
CustomConstraint, checked by a validator the host registers."""

from nestedflow.template.constraints import (  # noqa: F401 - re-exported
    AllowedPattern,
    AllowedValues,
    Constraint,
    Length,
    Modulo,
    Range,
)

#: Custom constraint name -> callable(value) returning True when valid.
_CUSTOM = {}


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
