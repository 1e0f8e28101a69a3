"""Hostile templates, environments and parameters: a property-based fuzz.

Whatever comes in -- malformed YAML, aliases that expand exponentially,
huge strings, deep nesting, wrong types anywhere -- validation answers
with :class:`StackValidationFailed` (one message; ``path`` where the
problem is), never another exception, within bounded time. Nothing is
stored: this is ``Engine.validate_template``, the path every create and
update takes before storing.
"""

import json
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nestedflow
from nestedflow import exceptions

#: Cases per test below. This is the broad sweep beside test_fuzz_input.py,
#: whose 10,000 cases are the fuzz run issue 19 asked for; here a few
#: hundred per shape keep the suite's time for what the other does not try.
CASES = 600

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=40), st.just("x" * 100_000))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=30)
sections = st.sampled_from(["heat_template_version", "description", "parameters",
                            "resources", "outputs", "conditions", "parameter_groups"])
templates = st.one_of(
    st.dictionaries(sections, values, max_size=6),
    st.fixed_dictionaries({
        "heat_template_version": st.sampled_from(["2018-08-31", "2013-05-23", 1, None]),
        "parameters": st.dictionaries(st.text(max_size=8), values, max_size=3),
        "resources": st.dictionaries(st.text(max_size=8), st.one_of(values, st.fixed_dictionaries(
            {"type": st.sampled_from(["OS::Heat::None", "OS::Heat::TestResource", "x.yaml", 3]),
             "properties": values, "depends_on": values})), max_size=3),
        "outputs": st.dictionaries(st.text(max_size=8), values, max_size=2),
    }),
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz')}/nf.sqlite"
    engine = nestedflow.Engine(db_url=url)
    yield engine
    engine.close()


def _validate(engine, template, **kwargs):
    started = time.monotonic()
    try:
        engine.validate_template(template, **kwargs)
    except exceptions.StackValidationFailed as error:
        assert str(error).strip()
    assert time.monotonic() - started < 5


FAST = settings(max_examples=CASES, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@FAST
@given(template=templates)
def test_template_structures(engine, template):
    _validate(engine, template)


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(template=templates, dump=st.sampled_from(["yaml", "json", "cut", "tabs"]))
def test_template_text(engine, template, dump):
    try:
        text = (json.dumps(template) if dump == "json"
                else yaml.safe_dump(template, default_flow_style=dump == "tabs"))
    except (ValueError, yaml.YAMLError):
        return
    if dump == "cut":
        text = text[: len(text) // 2] + "\n  - : {"
    if dump == "tabs":
        text = text.replace(" ", "\t", 3)
    _validate(engine, text)


@FAST
@given(environment=st.one_of(values, st.dictionaries(
    st.sampled_from(["parameters", "parameter_defaults", "resource_registry", "bogus"]),
    values, max_size=3)), parameters=st.one_of(values, st.dictionaries(
        st.text(max_size=8), values, max_size=3)))
def test_environments_and_parameters(engine, environment, parameters):
    template = {"heat_template_version": "2018-08-31",
                "parameters": {"p": {"type": "string", "default": "x"},
                               "n": {"type": "number", "default": 1}},
                "resources": {"r": {"type": "OS::Heat::None"}}}
    try:
        _validate(engine, template, environment=environment, parameters=parameters)
    except (TypeError, AttributeError) as error:  # pragma: no cover - the finding
        raise AssertionError(f"not a validation error: {error!r}") from error


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(depth=st.integers(1, 2000), width=st.integers(1, 12), laughs=st.integers(1, 12))
def test_nesting_and_aliases(engine, depth, width, laughs):
    nested = "[" * depth + "]" * depth
    _validate(engine, "heat_template_version: 2018-08-31\nresources:\n  r:\n"
              f"    type: OS::Heat::None\n    properties: {{x: {nested}}}\n")
    bomb = "a0: &a0 [" + ",".join(["x"] * width) + "]\n" + "".join(
        f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]\n"
        for i in range(1, laughs))
    _validate(engine, "heat_template_version: 2018-08-31\n" + bomb)


def test_nothing_was_stored(engine):
    assert engine.list_stacks() == []
