"""What one intrinsic function call may build ([engine] max_function_string_size,
max_function_result_items): a small template asking for a huge result is
refused with the call's path, before the result is made where its size can
be known first, and before anything is stored."""

import time
import tracemalloc

import pytest
import yaml

from nestedflow import exceptions, testing
from nestedflow.conf import CONF
from nestedflow.engine import validation
from nestedflow.exceptions import StackValidationFailed
from nestedflow.resources.registry import ResourceRegistry
from nestedflow.template.functions import ResolveContext, resolve

HOT = "heat_template_version: 2021-04-16\n"




def output(value):
    """A template whose one output is ``value``."""
    return {"heat_template_version": "2021-04-16", "outputs": {"o": {"value": value}}}


def validate(template, **kwargs):
    return validation.validate_template(ResourceRegistry(), template, **kwargs)


def cube(size):
    """The audit's template: about 1 kB asking for size**3 copies."""
    values = "[" + ", ".join(str(i) for i in range(size)) + "]"
    return (HOT + "outputs:\n  o:\n    value:\n      repeat:\n"
            "        template: '%a%-%b%-%c%'\n        for_each:\n"
            f"          '%a%': &v {values}\n          '%b%': *v\n          '%c%': *v\n")


def test_defaults():
    assert CONF.engine.max_function_string_size == 1048576
    assert CONF.engine.max_function_result_items == 100000


def test_repeat_product_refused_before_it_is_made():
    text = cube(150)
    assert len(text) < 1000
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(StackValidationFailed) as error:
            validate(text)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(error.value) == (
        "outputs.o.value.repeat: would return 3375000 items, more than [engine] "
        "max_function_result_items (100000)")
    assert error.value.path == "outputs.o.value.repeat"
    assert elapsed < 5
    assert peak < 8 * 2**20, peak


def test_refused_create_stores_nothing(sqlite_engine, stack_name):
    """An output that asks for too much refuses the stack (other output
    errors only make the output None): nothing is stored."""
    before = testing.stored_rows(sqlite_engine)
    with pytest.raises(exceptions.StackValidationFailed) as error:
        sqlite_engine.create_stack(stack_name, cube(150))
    assert error.value.path == "outputs.o.value.repeat"
    assert "max_function_result_items" in str(error.value)
    assert testing.stored_rows(sqlite_engine) == before
    assert sqlite_engine.list_stacks(show_nested=True) == []


def test_refused_in_a_resource_property_stores_nothing(sqlite_engine, stack_name, override):
    override("max_function_string_size", 2000)
    tmpl = {"heat_template_version": "2021-04-16",
            "parameters": {"v": {"type": "string", "default": "y" * 200}},
            "resources": {"r": {"type": "OS::Heat::None", "properties": {"value": {
                "str_replace": {"template": "%x%" * 11,
                                "params": {"%x%": {"get_param": "v"}}}}}}}}
    before = testing.stored_rows(sqlite_engine)
    with pytest.raises(exceptions.StackValidationFailed) as error:
        sqlite_engine.create_stack(stack_name, tmpl)
    assert str(error.value) == (
        "resources.r.properties.value.str_replace: would build 2200 characters, more "
        "than [engine] max_function_string_size (2000)")
    assert testing.stored_rows(sqlite_engine) == before
    stack = sqlite_engine.create_stack(stack_name, tmpl, parameters={"v": "y" * 180})
    assert sqlite_engine.wait(stack.id, timeout=60).status == "COMPLETE"


# (function call, its result at the limit of 100 items / 1024 characters,
# one over); the limits are set to the options' least values.
ITEMS = [
    ({"str_split": [",", ",".join("a" * 100)]}, {"str_split": [",", ",".join("a" * 101)]}),
    ({"list_concat": [[1] * 40, [2] * 60]}, {"list_concat": [[1] * 41, [2] * 60]}),
    # Counted before duplicates are dropped: the pairs compared are the cost.
    ({"list_concat_unique": [list(range(99)), [1]]},
     {"list_concat_unique": [list(range(100)), [1]]}),
    ({"map_merge": [{f"k{i}": i for i in range(50)}, {f"j{i}": i for i in range(50)}]},
     {"map_merge": [{f"k{i}": i for i in range(51)}, {f"j{i}": i for i in range(50)}]}),
    ({"map_replace": [{f"k{i}": i for i in range(100)}, {"keys": {"k0": "z"}}]},
     {"map_replace": [{f"k{i}": i for i in range(101)}, {"keys": {"k0": "z"}}]}),
    ({"filter": [[0], list(range(101))]}, {"filter": [[0], list(range(102))]}),
    ({"repeat": {"template": "%i%", "for_each": {"%i%": list(range(100))}}},
     {"repeat": {"template": "%i%", "for_each": {"%i%": list(range(101))}}}),
    # Copies times the values of one copy: 50 copies of [x, y] are 150 values
    # (the list and its two items) -- over 100 though only 50 items.
    ({"repeat": {"template": ["%i%"], "for_each": {"%i%": list(range(50))}}},
     {"repeat": {"template": ["%i%", "y"], "for_each": {"%i%": list(range(50))}}}),
    ({"repeat": {"template": "%a%%b%", "for_each": {"%a%": [1, 2], "%b%": [1] * 50}}},
     {"repeat": {"template": "%a%%b%", "for_each": {"%a%": [1, 2, 3], "%b%": [1] * 34}}}),
]

STRINGS = [
    ({"str_replace": {"template": "$x" * 32, "params": {"$x": "y" * 32}}},
     {"str_replace": {"template": "$x" * 32 + "!", "params": {"$x": "y" * 32}}}),
    ({"str_replace_strict": {"template": "ab$x", "params": {"$x": "y" * 1022}}},
     {"str_replace_strict": {"template": "ab$x", "params": {"$x": "y" * 1023}}}),
    ({"list_join": ["--", ["y" * 340] * 3]}, {"list_join": ["--", ["y" * 340] * 3, ["z"]]}),
    # Maps are joined as JSON: {"k": "..."} is 9 characters and the value.
    ({"list_join": [",", [{"k": "y" * 503}, {"k": "y" * 502}]]},
     {"list_join": [",", [{"k": "y" * 504}, {"k": "y" * 502}]]}),
    ({"make_url": {"scheme": "http", "host": "h", "path": "/" + "p" * 1015}},
     {"make_url": {"scheme": "http", "host": "h", "path": "/" + "p" * 1016}}),
    # repeat spends one budget over every string it substitutes.
    ({"repeat": {"template": "%i%" + "x" * 127, "for_each": {"%i%": ["a"] * 8}}},
     {"repeat": {"template": "%i%" + "x" * 127, "for_each": {"%i%": ["a"] * 9}}}),
    ({"repeat": {"template": {"k": "%i%%i%"}, "for_each": {"%i%": ["y" * 512]}}},
     {"repeat": {"template": {"k": "%i%%i%"}, "for_each": {"%i%": ["y" * 513]}}}),
    # A key that is a placeholder takes the item, made text when it is a map.
    ({"repeat": {"template": {"%i%": 1}, "for_each": {"%i%": [{"a": "y" * 1015}]}}},
     {"repeat": {"template": {"%i%": 1}, "for_each": {"%i%": [{"a": "y" * 1016}]}}}),
]


def _limited(override):
    override("max_function_result_items", 100)
    override("max_function_string_size", 1024)


def _name(call):
    return next(iter(call))


@pytest.mark.parametrize("fits, over", ITEMS, ids=lambda case: _name(case))
def test_result_items(override, fits, over):
    _limited(override)
    ctx = ResolveContext()
    result = resolve(fits, ctx, "outputs.o.value")
    assert 0 < len(result) <= 100
    with pytest.raises(StackValidationFailed) as error:
        resolve(over, ctx, "outputs.o.value")
    assert error.value.path == f"outputs.o.value.{_name(over)}"
    assert "more than [engine] max_function_result_items (100)" in str(error.value)
    assert error.value.limit == "max_function_result_items"
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("fits, over", STRINGS, ids=lambda case: _name(case))
def test_built_text(override, fits, over):
    _limited(override)
    ctx = ResolveContext()
    result = resolve(fits, ctx, "resources.r.properties.p")
    assert len(str(result)) >= 1000  # at the limit, not well within it
    with pytest.raises(StackValidationFailed) as error:
        resolve(over, ctx, "resources.r.properties.p")
    assert error.value.path == f"resources.r.properties.p.{_name(over)}"
    assert "more than [engine] max_function_string_size (1024)" in str(error.value)
    assert "\n" not in str(error.value)


def test_nested_call_is_named(override):
    _limited(override)
    snippet = {"list_join": [",", {"str_split": [",", ",".join("a" * 200)]}]}
    with pytest.raises(StackValidationFailed) as error:
        resolve(snippet, ResolveContext(), "outputs.o.value")
    assert error.value.path == "outputs.o.value.list_join[1].str_split"


@pytest.mark.parametrize("snippet", [
    # 100,000 placeholders each given 100,000 characters: 10**10 characters.
    {"str_replace": {"template": "%x%" * 100000, "params": {"%x%": "y" * 100000}}},
    # A million items from one string.
    {"str_split": [",", "," * 1000000]},
    # 100,000 copies of a template of 100,000 values.
    {"repeat": {"template": ["%i%"] * 100000, "for_each": {"%i%": list(range(100000))}}},
    # One long string placed 30,000 times into each of 30 copies.
    {"repeat": {"template": "%i%" * 30000, "for_each": {"%i%": ["y" * 1000] * 30}}},
], ids=["str_replace", "str_split", "repeat-values", "repeat-text"])
def test_huge_results_refused_before_they_are_made(snippet):
    tracemalloc.start()
    try:
        with pytest.raises(StackValidationFailed, match="more than \\[engine\\] max_function"):
            resolve(snippet, ResolveContext(), "o")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The arguments themselves are a few MB; the results would be GBs.
    assert peak < 40 * 2**20, peak


def test_an_output_that_fails_otherwise_is_still_none():
    """Only the size limits refuse a template from an output (Heat turns any
    other output error into None)."""
    validate(output({"str_split": [",", 1]}))
    with pytest.raises(StackValidationFailed, match="max_function_result_items"):
        validate(output({"str_split": [",", "," * 200000]}))


def test_limits_are_checked_on_parameter_values(override):
    override("max_function_result_items", 100)
    text = HOT + yaml.safe_dump({
        "parameters": {"n": {"type": "json"}},
        "outputs": {"o": {"value": {"repeat": {"template": "%i%-%j%", "for_each": {
            "%i%": {"get_param": "n"}, "%j%": {"get_param": "n"}}}}}}})
    validate(text, params={"n": list(range(10))})
    with pytest.raises(StackValidationFailed, match="would return 121 items"):
        validate(text, params={"n": list(range(11))})
