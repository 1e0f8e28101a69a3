"""Property-based fuzzing of hostile input: templates, environments and
parameters -- malformed YAML, alias bombs, huge strings, deep nesting and
wrong types everywhere. 10,000 cases in all (deterministic, so CI is
stable); each must either validate or raise StackValidationFailed with a
one-line message naming where the problem is, never another exception,
within a bounded time. Memory is bounded
by the [engine] limits the cases run under (an alias bomb is cut off after
max_template_values values)."""

import json
import string
import uuid

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.engine import validation
from nestedflow.resources.registry import ResourceRegistry

REGISTRY = ResourceRegistry()
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Small limits keep every case cheap; the defaults are tested in test_input_limits.
LIMITS = {"max_template_values": 5000, "max_template_depth": 40,
          "max_template_size": 200000, "max_parameter_size": 100000}

def fuzz(examples):
    return settings(max_examples=examples, derandomize=True, database=None, deadline=3000,
                    print_blob=True, suppress_health_check=list(HealthCheck))

HOT_KEYS = ["heat_template_version", "description", "parameters", "resources", "outputs",
            "conditions", "parameter_groups", "type", "properties", "default", "value",
            "depends_on", "condition", "metadata", "hidden", "constraints", "get_param",
            "get_attr", "get_resource", "str_replace", "list_join", "yaql", "if", "repeat",
            "map_merge", "get_file", "resource_registry", "parameter_defaults",
            "OS::Heat::None", "OS::Heat::Stack", "OS::Heat::ResourceGroup",
            "OS::Heat::RandomString", "2018-08-31", "2013-05-23", "p", "r", "o"]
VERSIONS = ["2013-05-23", "2016-10-14", "2018-08-31", "2021-04-16", "wallaby", "bogus"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.sampled_from(HOT_KEYS), st.text(max_size=20),
)
HUGE = "x" * 300000  # over max_template_size and max_parameter_size
keys = st.one_of(st.sampled_from(HOT_KEYS), st.text(max_size=8), st.integers())


def nested(leaves, max_leaves=5):
    return st.recursive(
        leaves,
        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                st.dictionaries(keys, inner, max_size=3)),
        max_leaves=max_leaves)


values = nested(scalars)


def deep(depth, leaf="x"):
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


# Mostly ordinary values; sometimes too deep (the limit is 40) or too big.
hostile_values = st.one_of(values, values, values, st.integers(30, 60).map(deep),
                           st.just(HUGE))


@st.composite
def templates(draw):
    """Mostly-HOT structures with wrong types spliced in anywhere."""
    resource = st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(HOT_KEYS[30:34]), values)},
        optional={"properties": hostile_values, "depends_on": values,
                  "metadata": hostile_values, "condition": values})
    tmpl = draw(st.fixed_dictionaries(
        {"heat_template_version": st.one_of(st.sampled_from(VERSIONS), values)},
        optional={
            "description": values,
            "parameters": st.one_of(values, st.dictionaries(
                st.text(string.ascii_letters, min_size=1, max_size=5),
                st.one_of(values, st.fixed_dictionaries(
                    {"type": st.one_of(st.sampled_from(
                        ["string", "number", "json", "boolean", "comma_delimited_list"]),
                        values)},
                    optional={"default": hostile_values, "hidden": values,
                              "constraints": values})),
                max_size=4)),
            "resources": st.one_of(values, st.dictionaries(keys, st.one_of(resource, values),
                                                           max_size=4)),
            "outputs": st.one_of(values, st.dictionaries(
                keys, st.one_of(values, st.fixed_dictionaries({"value": hostile_values})),
                max_size=3)),
            "conditions": values,
            "parameter_groups": values,
        }))
    extra = draw(st.dictionaries(keys, values, max_size=2))
    return {**tmpl, **extra}


def alias_bomb(levels, width):
    lines = ["heat_template_version: 2018-08-31", "outputs:", "  o:", "    value:",
             "      l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"      l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def as_text(draw, data):
    form = draw(st.sampled_from(["yaml", "json", "dict"]))
    if form == "dict":
        return data
    try:
        if form == "json":
            return json.dumps(data, default=str)
        return yaml.dump(data, Dumper=DUMPER, default_flow_style=draw(st.booleans()))
    except (ValueError, TypeError, RecursionError):
        return data


@st.composite
def template_texts(draw):
    """Text: valid-looking YAML cut and spliced, alias bombs, garbage."""
    kind = draw(st.sampled_from(["mutated", "bomb", "garbage", "deep", "bytes"]))
    if kind == "bomb":
        return alias_bomb(draw(st.integers(2, 12)), draw(st.integers(2, 12)))
    if kind == "garbage":
        return draw(st.text(alphabet=string.printable + "&*!|>{}[]:-#%@`\u00e9\x00",
                            max_size=200))
    if kind == "deep":
        depth = draw(st.integers(1, 3000))
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ('{"a": ', "}")]))
        return "heat_template_version: 2018-08-31\noutputs: " + opener * depth + closer * depth
    if kind == "bytes":
        return draw(st.binary(max_size=100))
    text = yaml.dump(draw(templates()), Dumper=DUMPER)
    cut = draw(st.integers(0, len(text)))
    splice = draw(st.text(alphabet="&*!|>{}[]:- \n\t'\"", max_size=10))
    return text[:cut] + splice + text[cut:]


def assert_names_where(error, document):
    """``error`` says where its problem is: a path, a line and column (a
    parse error), or -- a problem of the whole ``document`` (its size,
    encoding, type, values) -- that document, first."""
    message = str(error)
    assert message.strip(), f"empty message for {type(error).__name__}"
    # The path holds the keys as written (a key may hold a newline).
    assert "\n" not in error.reason, f"{type(error).__name__} is not one line: {message!r}"
    if error.path is not None or getattr(error, "line", None) is not None:
        return
    assert message.startswith(document), (
        f"{type(error).__name__} names no path, line or {document}: {message!r:.300}")


def check(template, environment=None, params=None, files=None, document="template"):
    try:
        answer = validation.validate_template(REGISTRY, template, files=files,
                                              environment=environment, params=params)
    except exceptions.StackValidationFailed as error:
        assert_names_where(error, document)
        return
    assert isinstance(answer, dict)


@pytest.fixture(autouse=True)
def small_limits():
    for name, value in LIMITS.items():
        CONF.set_override(name, value, group="engine")
    yield
    for name in LIMITS:
        CONF.clear_override(name, group="engine")


@fuzz(2000)
@given(st.data())
def test_fuzz_template_structures(data):
    check(as_text(data.draw, data.draw(templates())))


@fuzz(2500)
@given(template_texts())
def test_fuzz_template_texts(text):
    check(text)


@fuzz(2000)
@given(st.data())
def test_fuzz_environments(data):
    env = data.draw(st.one_of(
        values, template_texts(),
        st.fixed_dictionaries({}, optional={
            "parameters": hostile_values, "parameter_defaults": hostile_values,
            "resource_registry": hostile_values, "event_sinks": values})))
    check("heat_template_version: 2018-08-31\nparameters:\n  p: {type: string}\n",
          environment=as_text(data.draw, env) if isinstance(env, dict) else env,
          params={"p": "v"}, document="environment")


@fuzz(3500)
@given(st.dictionaries(st.sampled_from(["s", "n", "j", "b", "l", "zz"]), hostile_values,
                       max_size=5))
def test_fuzz_parameters(params):
    check("heat_template_version: 2018-08-31\nparameters:\n"
          "  s: {type: string, default: x, constraints: [{length: {max: 50}}]}\n"
          "  n: {type: number, default: 1}\n  j: {type: json, default: {}}\n"
          "  b: {type: boolean, default: true}\n"
          "  l: {type: comma_delimited_list, default: a}\n"
          "resources:\n  r:\n    type: OS::Heat::None\n    properties:\n"
          "      value: {get_param: j}\n", params=params, document="parameters")


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(template=st.one_of(templates(), template_texts()))
def test_refused_create_stores_nothing(sqlite_engine, template):
    """A few fuzzed templates through create_stack: a refused one stores nothing."""
    before = len(sqlite_engine.list_stacks(show_nested=True))
    try:
        stack = sqlite_engine.create_stack(f"fuzzed-{uuid.uuid4().hex[:8]}", template)
    except exceptions.StackValidationFailed as error:
        assert_names_where(error, "template")
        assert len(sqlite_engine.list_stacks(show_nested=True)) == before
        return
    sqlite_engine.wait(stack.id, timeout=60)
    sqlite_engine.delete_stack(stack.id)
    sqlite_engine.wait(stack.id, timeout=60)
