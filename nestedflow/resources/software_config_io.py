"""The inputs and outputs of a software config, as Heat stores them.

Heat's heat/engine/software_config_io.py: each input is a mapping with
``name`` (required), ``description``, ``type`` (one of :data:`TYPES`,
default ``String``), ``default`` (checked and converted as a parameter of
that type) and ``replace_on_change`` (default false, kept only when true);
each output has ``name``, ``description``, ``type`` and ``error_output``
(default false). What is stored is the mapping without its null fields
(``IOConfig.as_dict``), so a config shows ``type: String`` even where the
template left it out.
"""

import json
from collections.abc import Mapping, Sequence

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.constraints import AllowedValues
from nestedflow.properties.schema import Property, Types, validate_properties

TYPES = (STRING, NUMBER, LIST, JSON, BOOLEAN) = (
    "String", "Number", "CommaDelimitedList", "Json", "Boolean")

#: Heat's ``input_config_schema``.
INPUT_SCHEMA = {
    "name": Property(Types.STRING, "Name of the input.", required=True),
    "description": Property(Types.STRING, "Description of the input."),
    "type": Property(Types.STRING, "Type of the value of the input.", default=STRING,
                     constraints=[AllowedValues(list(TYPES))]),
    "default": Property(Types.ANY, "Default value for the input if none is specified."),
    "replace_on_change": Property(
        Types.BOOLEAN, "Replace the deployment instead of updating it when the input "
        "value changes.", default=False),
}

#: Heat's ``output_config_schema``.
OUTPUT_SCHEMA = {
    "name": Property(Types.STRING, "Name of the output.", required=True),
    "description": Property(Types.STRING, "Description of the output."),
    "type": Property(Types.STRING, "Type of the value of the output.", default=STRING,
                     constraints=[AllowedValues(list(TYPES))]),
    "error_output": Property(
        Types.BOOLEAN, "Denotes that the deployment is in an error state if this output "
        "has a value.", default=False),
}


def check_io_schema_list(io_configs, path):
    """Heat's check: a list of mappings (TypeError there; a validation error
    naming ``path`` here)."""
    if (not isinstance(io_configs, Sequence) or isinstance(io_configs, (str, bytes))):
        raise StackValidationFailed("Software Config I/O Schema must be in a list", path=path)
    for index, item in enumerate(io_configs):
        if not isinstance(item, Mapping):
            raise StackValidationFailed("Software Config I/O Schema must be a dict",
                                        path=f"{path}[{index}]")


def _typed_default(kind, value, path):
    """The default as a parameter of type ``kind`` takes it (Heat builds the
    ``default`` schema from the parameter type: ``Schema.from_parameter``)."""
    if value is None:
        return None
    try:
        if kind == NUMBER:
            return Property(Types.NUMBER).coerce(value, path)
        if kind == BOOLEAN:
            return Property(Types.BOOLEAN).coerce(value, path)
        if kind == STRING:
            return Property(Types.STRING).coerce(value, path)
        if kind == LIST:
            if isinstance(value, str):
                return [item.strip() for item in value.split(",")] if value else []
            return Property(Types.LIST).coerce(value, path)
        if isinstance(value, str):
            value = json.loads(value)
        return Property(Types.MAP).coerce(value, path)
    except ValueError as error:
        raise StackValidationFailed(f"not a valid {kind}: {error}", path=path) from None


def input_config(item, path, value=None, with_value=False):
    """One input as Heat stores it (``InputConfig(**item).as_dict()``);
    ``with_value`` adds the deployment's ``value`` for it."""
    props = validate_properties(INPUT_SCHEMA, item, path)
    # Heat's legacy path: an empty default of a non-String type is kept
    # unchecked (defaults used to be strings).
    if not (props["default"] == "" and props["type"] != STRING):
        props["default"] = _typed_default(props["type"], props["default"],
                                          f"{path}.default")
    stored = {key: val for key, val in props.items() if val is not None}
    if not props["replace_on_change"]:
        del stored["replace_on_change"]
    if with_value:
        stored["value"] = value
    return stored


def output_config(item, path):
    """One output as Heat stores it (``OutputConfig(**item).as_dict()``)."""
    props = validate_properties(OUTPUT_SCHEMA, item, path)
    return {key: val for key, val in props.items() if val is not None}


def inputs(items, path="inputs"):
    """Heat's ``[InputConfig(**i) for i in inputs]``: an input may carry its
    ``value`` (a deployment's derived config does: heatclient's
    deployment_utils.build_derived_config_params), which InputConfig takes
    as an argument of its own and stores with the input."""
    items = [] if items is None else items
    check_io_schema_list(items, path)
    return [input_config({k: v for k, v in item.items() if k != "value"}, f"{path}[{i}]",
                         value=item.get("value"), with_value="value" in item)
            for i, item in enumerate(items)]


def outputs(items, path="outputs"):
    items = [] if items is None else items
    check_io_schema_list(items, path)
    return [output_config(item, f"{path}[{i}]") for i, item in enumerate(items)]
