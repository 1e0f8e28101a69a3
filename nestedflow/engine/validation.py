"""``Engine.validate_template``: Heat's template-validate answer.

Follows heat/engine/service.py ``EngineService.validate_template`` and
heat/engine/api.py ``format_validate_parameter``: the template is checked as
a create would check it (sections, functions of its version, conditions,
resource types, properties, references, dependency cycles), without storing
anything; a parameter with neither a value nor a default is not an error
here, as in Heat (its value is unknown while validating).
"""

import types

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.engine import nested_parameters
from nestedflow.properties.schema import UNRESOLVED
from nestedflow.stacks.types import ValidatingTypes
from nestedflow.template import limits, loader, parameters, validator
from nestedflow.template.template import Template

# heat/rpc/api.py VALIDATE_PARAM_TYPES.
_API_TYPES = {
    parameters.STRING: "String",
    parameters.NUMBER: "Number",
    parameters.COMMA_DELIMITED_LIST: "CommaDelimitedList",
    parameters.JSON: "Json",
    parameters.BOOLEAN: "Boolean",
}

# Constraint key -> ((Heat API key, constraint attribute), ...).
_CONSTRAINT_KEYS = {
    "length": (("MinLength", "min"), ("MaxLength", "max")),
    "range": (("MinValue", "min"), ("MaxValue", "max")),
    "modulo": (("Step", "step"), ("Offset", "offset")),
    "allowed_values": (("AllowedValues", "values"),),
    "allowed_pattern": (("AllowedPattern", "pattern"),),
    "custom_constraint": (("CustomConstraint", "name"),),
}


#: Heat's coded errors validate_template may be told to ignore
#: (heat/common/exception.py ``ERROR_CODE_MAP``: ResourceTypeUnavailable, a
#: service missing from Keystone's catalog). nestedflow raises none of them.
IGNORABLE_ERRORS = frozenset({"99001"})


def validate_template(registry, template, files=None, environment=None, params=None,
                      show_nested=False, ignorable_errors=None):
    """Return Heat's validate answer for ``template``; raise StackValidationFailed.

    ``{"Description", "Parameters": {name: {"Type", "Description", "NoEcho",
    "Label", "Default"?, "Value"?, "Tags"?, constraints...}},
    "ParameterGroups"?, "NestedParameters"? (``show_nested``), "Environment"}``.
    ``ignorable_errors`` are Heat's error codes; one Heat does not know is
    refused with Heat's message, as heat-engine refuses it.
    """
    invalid = set(ignorable_errors or ()) - IGNORABLE_ERRORS
    if invalid:
        raise exceptions.StackValidationFailed(
            f"Invalid codes in ignore_errors : {sorted(invalid)}")
    limits.check_parameters_mapping(params)
    limit = CONF.engine.max_template_size
    tmpl = Template(loader.load(template, max_size=limit), files=files,
                    environment=_environment(environment, limit), checked=True)
    given = dict(params or {})
    env = tmpl.environment
    known = set(given) | set(env["parameters"]) | set(env["parameter_defaults"])
    unknown = [name for name, schema in tmpl.parameters.items()
               if not schema.has_default and name not in known]
    # resolve_parameters reads only .parameters and .environment.
    with_values = types.SimpleNamespace(
        parameters={n: s for n, s in tmpl.parameters.items() if n not in unknown},
        environment=env)
    pseudo = {"OS::stack_name": "dummy", "OS::stack_id": "None", "OS::project_id": ""}
    resolved = parameters.resolve_parameters(with_values, given, pseudo=pseudo)
    resolved.update(dict.fromkeys(unknown, UNRESOLVED))
    # Nested templates are checked with the child environment (registry,
    # parameter_defaults) they would get.
    validator.validate(tmpl, resolved,
                       ValidatingTypes(registry, tmpl.files, environment=env).get)
    result = {
        "Description": tmpl.description or "No description",
        "Parameters": {name: _parameter(tmpl, name, given) for name in tmpl.parameters},
    }
    if tmpl.parameter_groups:
        result["ParameterGroups"] = tmpl.parameter_groups
    if show_nested:
        result.update(nested_parameters.nested_parameters(tmpl, resolved, _parameter))
    result["Environment"] = {key: dict(value) for key, value in env.items()}
    return result


def _environment(environment, limit):
    if environment is None or isinstance(environment, dict):
        return environment
    return loader.load(environment, max_size=limit, name="environment")


def _parameter(tmpl, name, given):
    schema = tmpl.parameters[name]
    spec = (tmpl.raw.get("parameters") or {}).get(name) or {}
    env = tmpl.environment
    answer = {
        "Type": _API_TYPES[schema.type],
        "Description": schema.description or "",
        "NoEcho": "true" if schema.hidden else "false",
        "Label": schema.label or name,
    }
    user_default = env["parameter_defaults"].get(name)
    if user_default is not None:
        answer["Default"] = user_default
    elif schema.has_default:
        answer["Default"] = spec.get("default", schema.default)
    value = given.get(name, env["parameters"].get(name))
    if value is not None:
        answer["Value"] = value
    if spec.get("tags"):
        answer["Tags"] = spec["tags"]
    descriptions = []
    for constraint in schema.constraints:
        for api_key, attribute in _CONSTRAINT_KEYS.get(constraint.key, ()):
            value = getattr(constraint, attribute, None)
            if value is not None:
                answer[api_key] = list(value) if api_key == "AllowedValues" else value
        if constraint.custom_description:
            descriptions.append(constraint.custom_description)
    if descriptions:
        answer["ConstraintDescription"] = " ".join(descriptions)
    return answer
