"""Configurable limits on user input ([engine] max_template_* options), each
checked while parsing, before anything is walked or stored."""

import json

import pytest

from nestedflow.engine import validation
from nestedflow.exceptions import StackValidationFailed, TemplateSyntaxError
from nestedflow.resources.registry import ResourceRegistry
from nestedflow.template import loader
from nestedflow.template.parameters import resolve_parameters
from nestedflow.template.template import Template

HOT = "heat_template_version: 2018-08-31\n"




def laughs(levels, indent):
    """'Billion laughs': 9**levels values from a few hundred bytes."""
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]"
              for i in range(1, levels)]
    return "\n".join(lines)


def validate(template, **kwargs):
    return validation.validate_template(ResourceRegistry(), template, **kwargs)


@pytest.mark.parametrize("section", [
    "outputs:\n  o:\n    value:\n",
    "resources:\n  r:\n    type: OS::Heat::None\n    properties:\n",
    "parameters:\n  p:\n    type: json\n    default:\n",
])
def test_alias_expansion_is_bounded(section):
    text = HOT + section + laughs(10, "      ")  # 9**10 values
    assert len(text) < 2000
    with pytest.raises(StackValidationFailed, match="more than 1000000 values"):
        validate(text)


def test_alias_expansion_in_environment():
    env = "parameter_defaults:\n" + laughs(10, "  ")
    with pytest.raises(StackValidationFailed, match="values"):
        validate(HOT, environment=env)


def test_max_template_values_is_configurable(override):
    text = HOT + "outputs:\n  o:\n    value: [" + ", ".join(["1"] * 50) + "]\n"
    validate(text)
    override("max_template_values", 40)
    with pytest.raises(StackValidationFailed, match="more than 40 values"):
        validate(text)


def test_deep_nesting_names_the_path(override):
    override("max_template_depth", 10)
    text = HOT + "outputs:\n  o:\n    value: " + "[" * 12 + "]" * 12 + "\n"
    with pytest.raises(StackValidationFailed) as error:
        validate(text)
    assert "outputs.o.value.0.0" in str(error.value)
    assert "deeper than the limit of 10 levels" in str(error.value)


def test_deep_nesting_default_refused_without_recursion_error():
    for text in ('{"heat_template_version": "2018-08-31", "outputs": ' + "[" * 50000
                 + "]" * 50000 + "}",
                 HOT + "outputs: " + "[" * 50000 + "]" * 50000):
        with pytest.raises(TemplateSyntaxError, match="nest"):
            loader.load(text)
    deep = {"a": 1}
    for _ in range(5000):
        deep = {"a": deep}
    with pytest.raises(StackValidationFailed, match="deeper than the limit of 100"):
        loader.load({"heat_template_version": "2018-08-31", "outputs": deep})


def test_max_parameters(override):
    params = "".join(f"  p{i}: {{type: string, default: x}}\n" for i in range(5))
    text = HOT + "parameters:\n" + params
    validate(text)
    override("max_parameters", 4)
    with pytest.raises(StackValidationFailed,
                       match="parameters: 5 parameters exceed the limit of 4"):
        validate(text)


def test_max_outputs(override):
    text = HOT + "outputs:\n" + "".join(f"  o{i}: {{value: 1}}\n" for i in range(5))
    validate(text)
    override("max_outputs", 4)
    with pytest.raises(StackValidationFailed, match="outputs: 5 outputs exceed the limit of 4"):
        validate(text)


def test_max_parameter_size(override):
    tmpl = Template(HOT + "parameters:\n  s: {type: string}\n  j: {type: json}\n")
    resolve_parameters(tmpl, {"s": "x" * 1000, "j": {"k": "x" * 1000}})
    override("max_parameter_size", 999)
    with pytest.raises(StackValidationFailed,
                       match="parameters.s: value is 1000 bytes, more than the limit of 999"):
        resolve_parameters(tmpl, {"s": "x" * 1000, "j": {}})
    with pytest.raises(StackValidationFailed, match="parameters.j: value is"):
        resolve_parameters(tmpl, {"s": "", "j": {"k": "x" * 1000}})


def test_max_template_size(override):
    text = HOT + "description: " + "x" * 200 + "\n"
    validate(text)
    override("max_template_size", 100)
    with pytest.raises(StackValidationFailed, match="more than the limit of 100 bytes"):
        validate(text)


def test_parameter_value_json_depth(override):
    override("max_template_depth", 5)
    tmpl = Template(HOT + "parameters:\n  j: {type: json}\n")
    value = json.loads("[" * 8 + "]" * 8)
    with pytest.raises(StackValidationFailed, match="parameters.j.0.0"):
        resolve_parameters(tmpl, {"j": value})


def test_alias_bomb_time_and_memory_are_bounded():
    """9**12 values from ~1.5 kB: refused at the default limit within a few
    seconds and a few tens of MB (the walk stops at max_template_values)."""
    import time
    import tracemalloc

    text = HOT + "outputs:\n  o:\n    value:\n" + laughs(12, "      ")
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(StackValidationFailed, match="more than 1000000 values"):
            validate(text)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < 20
    assert peak < 64 * 2**20, peak


@pytest.mark.parametrize("text", [HOT + "description: a\x00b\n",
                                  HOT + "description: \u00e9\x00b\n"])
def test_control_character_is_named_by_line_and_column(text):
    # libyaml counts UTF-8 bytes: the column is still in characters.
    with pytest.raises(TemplateSyntaxError) as error:
        loader.load(text)
    assert str(error.value) == (
        "line 2, column 15: unacceptable character #x0000: control characters are not allowed")


@pytest.mark.parametrize("environment, message", [
    (1, "environment must be a mapping, text or a path, not int"),
    (b"\xff", "environment is not UTF-8 text"),
    ("parameters: " + "x" * 300, "environment is 312 bytes, more than the limit of 200 bytes"),
    ("parameters: {p: 1", "environment: line 2, column 1: "),
    ("parameters:\n  p: \x07", "environment: line 2, column 6: unacceptable character #x0007"),
])
def test_environment_errors_name_the_environment(override, environment, message):
    override("max_template_size", 200)
    with pytest.raises(StackValidationFailed) as error:
        validate(HOT, environment=environment)
    assert str(error.value).startswith(message), error.value
