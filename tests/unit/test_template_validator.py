import time

import pytest

from nestedflow.exceptions import DependencyCycle, StackValidationFailed, UnknownResourceType
from nestedflow.properties.constraints import Range
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.template.functions import ResolveContext, resolve, select_path
from nestedflow.template.parameters import resolve_parameters
from nestedflow.template.template import Template
from nestedflow.template.validator import dependency_order, validate


class NoneResource:
    properties_schema = {}
    attributes_schema = {}


class TestResource:
    __test__ = False  # not a pytest class
    properties_schema = {
        "value": Property(Types.STRING, default=""),
        "count": Property(Types.INTEGER, constraints=[Range(min=1)]),
        "tags": Property(Types.LIST, schema=Property(Types.STRING)),
    }
    attributes_schema = {"output": Attribute("the value")}


class StackResource:
    properties_schema = None  # properties come from the nested template
    attributes_schema = {}
    dynamic_attributes = True


TYPES = {
    "OS::Heat::None": NoneResource,
    "OS::Heat::TestResource": TestResource,
    "nested.yaml": StackResource,
}


def lookup(type_name):
    try:
        return TYPES[type_name]
    except KeyError:
        raise UnknownResourceType(type_name) from None


def _template(resources, outputs=None, parameters=None, **kwargs):
    tmpl = {"heat_template_version": "2018-08-31", "resources": resources}
    if outputs is not None:
        tmpl["outputs"] = outputs
    if parameters is not None:
        tmpl["parameters"] = parameters
    return Template(tmpl, **kwargs)


def _validate(resources, outputs=None, values=None, parameters=None):
    tmpl = _template(resources, outputs, parameters)
    return validate(tmpl, resolve_parameters(tmpl, values), lookup)


def _fails(*args, **kwargs):
    with pytest.raises(StackValidationFailed) as info:
        _validate(*args, **kwargs)
    return info.value


REALISTIC = """\
heat_template_version: 2018-08-31
parameters:
  name: {type: string, default: web, constraints: [{length: {min: 2, max: 10}}]}
  replicas: {type: number, default: 2, constraints: [{range: {min: 1, max: 5}}]}
  zones: {type: comma_delimited_list, default: "az1,az2"}
resources:
  server:
    type: OS::Heat::TestResource
    properties:
      value:
        str_replace:
          template: $name-$zone
          params: {$name: {get_param: name}, $zone: {get_param: [zones, 0]}}
      count: {get_param: replicas}
      tags: {repeat: {for_each: {"%z%": {get_param: zones}}, template: "zone-%z%"}}
  config:
    type: OS::Heat::TestResource
    properties:
      value: {list_join: [",", [{get_attr: [server, output]}, {get_resource: server}]]}
  stack:
    type: nested.yaml
    properties:
      anything: {get_attr: [config, output]}
  done:
    type: OS::Heat::None
    depends_on: [stack]
outputs:
  url: {value: {get_attr: [stack, any_output, key]}}
  server: {value: {get_resource: server}}
"""


class TestHappyPath:
    def test_realistic_template(self):
        tmpl = Template(REALISTIC, files={"nested.yaml": "heat_template_version: 2018-08-31"})
        params = resolve_parameters(
            tmpl, {"replicas": "3"}, pseudo={"OS::stack_name": "s", "OS::stack_id": "1"}
        )
        assert params["replicas"] == 3 and params["zones"] == ["az1", "az2"]
        assert validate(tmpl, params, lookup) == ["server", "config", "stack", "done"]

    def test_realistic_template_resolves_at_run_time(self):
        tmpl = Template(REALISTIC)
        params = resolve_parameters(tmpl)
        attributes = {("server", "output"): "web-az1", ("stack", "any_output"): {"key": "v"}}
        ctx = ResolveContext(
            parameters=params,
            get_resource=lambda name: f"id-{name}",
            get_attr=lambda name, attr, path: select_path(attributes[(name, attr)], path),
        )
        server = resolve(tmpl.resources["server"].properties, ctx, "resources.server.properties")
        assert server == {"value": "web-az1", "count": 2, "tags": ["zone-az1", "zone-az2"]}
        config = resolve(tmpl.resources["config"].properties, ctx)
        assert config == {"value": "web-az1,id-server"}
        assert resolve(tmpl.outputs["url"].value, ctx) == "v"

    def test_order_follows_template_when_independent(self):
        resources = {name: {"type": "OS::Heat::None"} for name in "dcba"}
        resources["d"]["depends_on"] = "a"
        assert _validate(resources) == ["c", "b", "a", "d"]

    def test_dependencies_in_metadata_count(self):
        resources = {
            "a": {"type": "OS::Heat::None", "metadata": {"x": {"get_resource": "b"}}},
            "b": {"type": "OS::Heat::None"},
        }
        assert _validate(resources) == ["b", "a"]

    def test_long_chain_is_fast_and_iterative(self):
        count = 5000
        resources = {"r0": {"type": "OS::Heat::TestResource"}}
        for i in range(1, count):
            resources[f"r{i}"] = {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_attr": [f"r{i - 1}", "output"]}},
            }
        resources = dict(reversed(list(resources.items())))
        start = time.monotonic()
        order = _validate(resources)
        assert order == [f"r{i}" for i in range(count)]
        assert time.monotonic() - start < 10


class TestErrors:
    def test_unknown_type(self):
        with pytest.raises(UnknownResourceType) as info:
            _validate({"a": {"type": "OS::Nova::Server"}})
        assert str(info.value) == "resources.a.type: unknown resource type 'OS::Nova::Server'"
        assert info.value.type_name == "OS::Nova::Server"

    def test_unknown_property(self):
        err = _fails({"a": {"type": "OS::Heat::None", "properties": {"x": 1}}})
        assert str(err) == "resources.a.properties.x: unknown property"

    def test_property_type_from_parameter(self):
        err = _fails(
            {"a": {"type": "OS::Heat::TestResource", "properties": {"count": {"get_param": "n"}}}},
            parameters={"n": {"type": "string", "default": "many"}},
        )
        assert str(err) == "resources.a.properties.count: expected integer, got 'many'"

    def test_property_constraint(self):
        err = _fails({"a": {"type": "OS::Heat::TestResource", "properties": {"count": 0}}})
        assert str(err) == "resources.a.properties.count: 0 must be at least 1"

    def test_list_element_path(self):
        err = _fails(
            {"a": {"type": "OS::Heat::TestResource", "properties": {"tags": ["x", {"k": 1}]}}}
        )
        assert err.path == "resources.a.properties.tags[1]"

    def test_bad_function_in_properties(self):
        err = _fails(
            {
                "a": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_param": "missing"}},
                }
            }
        )
        assert str(err) == "resources.a.properties.value.get_param: unknown parameter 'missing'"

    def test_bad_function_in_metadata(self):
        err = _fails({"a": {"type": "OS::Heat::None", "metadata": {"m": {"get_file": "f"}}}})
        assert err.path == "resources.a.metadata.m.get_file"

    def test_unresolved_values_skip_type_checks(self):
        resources = {
            "a": {"type": "OS::Heat::TestResource"},
            "b": {
                "type": "OS::Heat::TestResource",
                "properties": {
                    "count": {"get_attr": ["a", "output"]},
                    "tags": {"get_attr": ["a", "output"]},
                },
            },
        }
        assert _validate(resources) == ["a", "b"]

    def test_unknown_depends_on(self):
        err = _fails({"a": {"type": "OS::Heat::None", "depends_on": ["b"]}})
        assert str(err) == "resources.a.depends_on: unknown resource 'b'"

    def test_depends_on_self(self):
        err = _fails({"a": {"type": "OS::Heat::None", "depends_on": "a"}})
        assert str(err) == "resources.a.depends_on: resource 'a' depends on itself"

    def test_get_resource_unknown(self):
        err = _fails(
            {
                "b": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_resource": "nope"}},
                }
            }
        )
        assert str(err) == "resources.b.properties.value: unknown resource 'nope'"

    def test_get_attr_unknown_resource_nested_path(self):
        err = _fails(
            {
                "b": {
                    "type": "OS::Heat::TestResource",
                    "properties": {
                        "value": {"list_join": [",", [{"get_attr": ["nope", "output"]}]]}
                    },
                }
            }
        )
        assert err.path == "resources.b.properties.value.list_join[1][0]"
        assert err.reason == "unknown resource 'nope'"

    def test_get_attr_unknown_attribute(self):
        err = _fails(
            {
                "a": {"type": "OS::Heat::TestResource"},
                "b": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_attr": ["a", "foo"]}},
                },
            }
        )
        assert str(err) == "resources.b.properties.value: resource a has no attribute 'foo'"

    def test_dynamic_attributes_accept_any_name(self):
        resources = {
            "a": {"type": "nested.yaml"},
            "b": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_attr": ["a", "whatever", 0]}},
            },
        }
        assert _validate(resources) == ["a", "b"]

    def test_self_reference(self):
        err = _fails(
            {
                "a": {
                    "type": "OS::Heat::TestResource",
                    "properties": {"value": {"get_resource": "a"}},
                }
            }
        )
        assert str(err) == "resources.a.properties.value: resource 'a' refers to itself"

    def test_output_unknown_resource(self):
        err = _fails({}, outputs={"url": {"value": {"get_attr": ["web", "output"]}}})
        assert str(err) == "outputs.url.value: unknown resource 'web'"

    def test_output_unknown_attribute(self):
        err = _fails(
            {"web": {"type": "OS::Heat::None"}},
            outputs={"url": {"value": {"get_attr": ["web", "ip"]}}},
        )
        assert str(err) == "outputs.url.value: resource web has no attribute 'ip'"

    def test_output_bad_function(self):
        # Heat's output.validate checks which functions are used, it does not
        # resolve them: a value that fails is None at run time, not a refusal.
        _validate({}, outputs={"o": {"value": {"str_split": [","]}}})
        err = _fails({}, outputs={"o": {"value": {"x": {"Fn::Select": [0, [1]]}}}})
        assert err.path == "outputs.o.value.x.Fn::Select"


class TestCycles:
    def test_cycle_is_named_in_order(self):
        resources = {
            "a": {"type": "OS::Heat::None", "depends_on": "b"},
            "b": {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_attr": ["c", "output"]}},
            },
            "c": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_resource": "a"}}},
        }
        with pytest.raises(DependencyCycle) as info:
            _validate(resources)
        assert info.value.cycle == ["a", "b", "c", "a"]
        assert str(info.value) == "resources: circular dependency: a -> b -> c -> a"

    def test_cycle_not_reachable_from_first_resource(self):
        resources = {
            "x": {"type": "OS::Heat::None", "depends_on": "c"},
            "b": {"type": "OS::Heat::None", "depends_on": "c"},
            "c": {"type": "OS::Heat::None", "depends_on": "b"},
        }
        with pytest.raises(DependencyCycle) as info:
            _validate(resources)
        assert info.value.cycle == ["b", "c", "b"]

    def test_long_cycle(self):
        count = 5000
        requires = {f"r{i}": {f"r{(i + 1) % count}"} for i in range(count)}
        with pytest.raises(DependencyCycle) as info:
            dependency_order(requires)
        assert len(info.value.cycle) == count + 1
        assert info.value.cycle[:3] == ["r0", "r1", "r2"]

    def test_dependency_order_ignores_unknown_names(self):
        assert dependency_order({"a": {"b", "zzz"}, "b": set()}) == ["b", "a"]
