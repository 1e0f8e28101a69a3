"""``attribute``: an attribute of the checked resource matches a value or pattern."""

import re

from nestedflow import exceptions
from nestedflow.checks import base
from nestedflow.properties.paths import select_path


class AttributeCheck(base.Check):
    """``attribute`` (a name the resource type has; ``path``: keys or
    indexes into its value) and either ``equals`` (a value) or ``matches``
    (a regular expression the value's text must match in full)."""

    parameters = {"attribute": True, "path": False, "equals": False, "matches": False}

    @classmethod
    def validate(cls, params, path):
        super().validate(params, path)
        if not isinstance(params["attribute"], str):
            raise exceptions.StackValidationFailed("must be an attribute name",
                                                   path=f"{path}.attribute")
        if ("equals" in params) == ("matches" in params):
            raise exceptions.StackValidationFailed("give exactly one of equals, matches",
                                                   path=path)
        if "matches" in params:
            try:
                re.compile(str(params["matches"]))
            except re.error as error:
                raise exceptions.StackValidationFailed(
                    f"not a regular expression: {error}", path=f"{path}.matches") from error
        if not isinstance(params.get("path", []), list):
            raise exceptions.StackValidationFailed("must be a list of keys or indexes",
                                                   path=f"{path}.path")

    def run(self, target, timeout):
        name = self.params["attribute"]
        value = select_path(target.get_attribute(name), self.params.get("path") or [])
        if "equals" in self.params:
            if value != self.params["equals"]:
                raise exceptions.CheckError(
                    f"attribute {name} is {value!r}, expected {self.params['equals']!r}")
            return f"attribute {name} is {value!r}"
        pattern = str(self.params["matches"])
        if value is None or not re.fullmatch(pattern, str(value)):
            raise exceptions.CheckError(f"attribute {name} is {value!r}, "
                                        f"does not match {pattern!r}")
        return f"attribute {name} {value!r} matches {pattern!r}"
