import pathlib

import pytest

from nestedflow.exceptions import StackValidationFailed, TemplateSyntaxError
from nestedflow.template import loader
from nestedflow.template.template import OutputDefinition, ResourceDefinition, Template

TEXT = """\
heat_template_version: 2016-10-14
description: demo
resources:
  a:
    type: OS::Heat::None
"""


def _fails(fn, *args, **kwargs):
    with pytest.raises(StackValidationFailed) as info:
        fn(*args, **kwargs)
    return info.value


class TestLoad:
    def test_yaml_text_keeps_version_a_string(self):
        data = loader.load(TEXT)
        assert data["heat_template_version"] == "2016-10-14"
        assert data["resources"] == {"a": {"type": "OS::Heat::None"}}

    def test_explicit_timestamp_stays_string(self):
        assert loader.load("t: 2001-12-14t21:59:43.10-05:00\n") == {
            "t": "2001-12-14t21:59:43.10-05:00"
        }

    def test_json_text(self):
        assert loader.load('{"heat_template_version": "2015-10-15"}') == {
            "heat_template_version": "2015-10-15"
        }

    def test_yaml_flow_mapping_that_is_not_json(self):
        assert loader.load("{a: 1}") == {"a": 1}

    def test_dict_is_deep_copied(self):
        original = {"resources": {"a": {"type": "x"}}}
        loaded = loader.load(original)
        loaded["resources"]["a"]["type"] = "y"
        assert original["resources"]["a"]["type"] == "x"

    def test_path_and_str_path(self, tmp_path):
        path = tmp_path / "t.yaml"
        path.write_text(TEXT)
        assert loader.load(path)["description"] == "demo"
        assert loader.load(str(path))["description"] == "demo"

    def test_bytes(self):
        assert loader.load(TEXT.encode())["description"] == "demo"

    def test_unreadable_path(self, tmp_path):
        err = _fails(loader.load, pathlib.Path(tmp_path / "missing.yaml"))
        assert "cannot read template" in str(err) and "missing.yaml" in str(err)

    def test_missing_file_name_gives_a_hint(self):
        err = _fails(loader.load, "no-such-template.yaml")
        assert "top level" in str(err) and "no file named 'no-such-template.yaml'" in str(err)

    def test_size_limit_text(self):
        err = _fails(loader.load, TEXT, max_size=10)
        assert str(err) == f"template is {len(TEXT)} bytes, more than the limit of 10 bytes"

    def test_size_limit_file(self, tmp_path):
        path = tmp_path / "big.yaml"
        path.write_text(TEXT)
        assert "more than the limit of 20 bytes" in str(_fails(loader.load, path, max_size=20))

    def test_size_limit_counts_bytes_not_characters(self):
        text = "a: " + "é" * 10
        assert loader.load(text, max_size=23) == {"a": "é" * 10}
        _fails(loader.load, text, max_size=22)

    def test_syntax_error_has_line_and_column(self):
        with pytest.raises(TemplateSyntaxError) as info:
            loader.load("resources:\n  a: [1, 2\n  b: 3\n")
        err = info.value
        assert (err.line, err.column) == (3, 4)
        assert str(err).startswith("line 3, column 4: ")
        assert "expected ',' or ']'" in str(err)

    def test_bad_indentation(self):
        with pytest.raises(TemplateSyntaxError) as info:
            loader.load("a:\n  b: 1\n c: 2\n")
        assert info.value.line == 3

    def test_duplicate_keys_take_the_last_value(self):
        """Heat's template_format.yaml_loader keeps PyYAML's last-one-wins."""
        assert loader.load("resources:\n  a: {type: x}\n  a: {type: y}\n") == {
            "resources": {"a": {"type": "y"}}}
        assert loader.load('{"a": 1, "a": 2}') == {"a": 2}

    def test_json_with_tabs(self):
        """JSON is parsed as JSON first (simple_parse), so tabs are fine."""
        assert loader.load('{\n\t"heat_template_version": "2015-10-15"\n}') == {
            "heat_template_version": "2015-10-15"}

    def test_errors_name_the_file(self):
        with pytest.raises(TemplateSyntaxError) as info:
            loader.load("a: [1\n", name="child.yaml")
        assert str(info.value).startswith("child.yaml: line 2, column 1: ")
        assert info.value.source == "child.yaml"
        err = _fails(loader.load, "a: " + "x" * 20, max_size=10, name="child.yaml")
        assert str(err) == "child.yaml is 23 bytes, more than the limit of 10 bytes"

    def test_file_errors_name_the_path(self, tmp_path):
        path = tmp_path / "bad.yaml"
        path.write_text("a:\n  b: 1\n c: 2\n")
        with pytest.raises(TemplateSyntaxError) as info:
            loader.load(path)
        assert str(info.value).startswith(f"{path}: line 3")

    def test_empty_document_is_an_empty_template(self):
        """Heat's simple_parse turns an empty YAML document into {}."""
        assert loader.load("") == {}
        assert loader.load("# only a comment\n") == {}

    def test_unsafe_tags_are_rejected(self):
        with pytest.raises(TemplateSyntaxError):
            loader.load("a: !!python/object/apply:os.system ['true']\n")

    @pytest.mark.parametrize("text", ["- a\n- b\n", "just text\nmore\n", "[1, 2]"])
    def test_top_level_must_be_mapping(self, text):
        assert "must be a mapping at the top level" in str(_fails(loader.load, text))

    def test_wrong_input_type(self):
        assert "not int" in str(_fails(loader.load, 5))


class TestLoadFiles:
    def test_normalises(self):
        assert loader.load_files(None) == {}
        assert loader.load_files({"a.sh": b"echo", "b": "x"}) == {"a.sh": "echo", "b": "x"}

    def test_errors(self):
        assert _fails(loader.load_files, ["a"]).path == "files"
        assert _fails(loader.load_files, {"a": 5}).path == "files.a"
        assert _fails(loader.load_files, {"a": b"\xff"}).path == "files.a"


FULL = """\
heat_template_version: rocky
description: A web tier
parameter_groups:
  - label: main
    parameters: [count]
parameters:
  count: {type: number, default: 2}
resources:
  net:
    type: My::Net
    metadata: {owner: {get_resource: owner}}
  owner:
    type: OS::Heat::None
  web:
    type: OS::Heat::TestResource
    depends_on: net
    deletion_policy: retain
    update_policy: {batch: 1}
    properties:
      value: {get_attr: [db, output]}
  db:
    type: db.yaml
    depends_on: [net, owner, net]
outputs:
  url:
    description: the url
    value: {get_attr: [web, output]}
"""


class TestTemplate:
    def test_full_template(self):
        tmpl = Template(
            FULL,
            files={"db.yaml": "x"},
            environment={
                "resource_registry": {"My::Net": "My::Alias", "My::Alias": "OS::Heat::None"}
            },
        )
        assert tmpl.version == "2018-08-31"
        assert tmpl.description == "A web tier"
        assert list(tmpl.resources) == ["net", "owner", "web", "db"]
        assert tmpl.resources["net"].type == "OS::Heat::None"
        assert tmpl.resources["db"] == ResourceDefinition(
            name="db",
            type="db.yaml",
            properties={},
            depends_on=("net", "owner"),
            deletion_policy="Delete",
            metadata={},
            update_policy={},
        )
        web = tmpl.resources["web"]
        assert (web.deletion_policy, web.depends_on, web.update_policy) == (
            "Retain",
            ("net",),
            {"batch": 1},
        )
        assert tmpl.outputs["url"] == OutputDefinition(
            "url", {"get_attr": ["web", "output"]}, "the url"
        )
        assert tmpl.parameters["count"].default == 2
        assert tmpl.files == {"db.yaml": "x"}
        assert tmpl.dependencies() == {
            "net": {"owner"},
            "owner": set(),
            "web": {"net", "db"},
            "db": {"net", "owner"},
        }

    def test_registry_maps_types_to_template_files(self):
        tmpl = Template(
            {"heat_template_version": "2021-04-16", "resources": {"a": {"type": "My::Server"}}},
            environment="resource_registry:\n  My::Server: server.yaml\n",
        )
        assert tmpl.resources["a"].type == "server.yaml"
        assert tmpl.environment == {
            "parameters": {},
            "parameter_defaults": {},
            "resource_registry": {"My::Server": "server.yaml"},
        }

    def test_minimal_template(self):
        tmpl = Template({"heat_template_version": "2013-05-23"})
        assert (tmpl.resources, tmpl.outputs, tmpl.parameters) == ({}, {}, {})
        assert tmpl.raw == {"heat_template_version": "2013-05-23"}

    def test_date_object_version_is_refused(self):
        # Heat reads a version only from a string (heat/engine/template.py
        # get_version); tests/functional/test_template_values.py covers the rest.
        import datetime

        with pytest.raises(StackValidationFailed, match="heat_template_version: must be a string"):
            Template({"heat_template_version": datetime.date(2015, 4, 30)})

    def test_resources_may_be_none(self):
        assert Template("heat_template_version: wallaby\nresources:\n").resources == {}

    @pytest.mark.parametrize(
        "tmpl, path, fragment",
        [
            ({}, "heat_template_version", "missing heat_template_version"),
            (
                {"heat_template_version": "2012-12-12"},
                "heat_template_version",
                "unknown version '2012-12-12'; accepted: 2013-05-23",
            ),
            (
                {"heat_template_version": "2016-10-14", "Resources": {}},
                "Resources",
                "unknown section",
            ),
            (
                {"heat_template_version": "2016-04-08", "conditions": {}},
                "conditions",
                "needs heat_template_version 2016-10-14 or later",
            ),
            (
                {"heat_template_version": "2016-10-14", "description": []},
                "description",
                "must be a string",
            ),
            (
                {"heat_template_version": "2016-10-14", "resources": []},
                "resources",
                "must be a mapping",
            ),
            (
                {"heat_template_version": "2016-10-14", "outputs": "x"},
                "outputs",
                "must be a mapping",
            ),
        ],
    )
    def test_template_errors(self, tmpl, path, fragment):
        err = _fails(Template, tmpl)
        assert err.path == path
        assert fragment in err.reason

    def test_error_lists_release_names(self):
        assert "wallaby" in _fails(Template, {"heat_template_version": "zed"}).reason

    @pytest.mark.parametrize(
        "resource, path, fragment",
        [
            ("x", "resources.r", "must be a mapping"),
            ({}, "resources.r.type", "non-empty string"),
            ({"type": 5}, "resources.r.type", "non-empty string"),
            ({"type": "T", "Properties": {}}, "resources.r.Properties", "unknown key"),
            ({"type": "T", "properties": [1]}, "resources.r.properties", "must be a mapping"),
            ({"type": "T", "metadata": "m"}, "resources.r.metadata", "must be a mapping"),
            ({"type": "T", "update_policy": 1}, "resources.r.update_policy", "must be a mapping"),
            ({"type": "T", "depends_on": 3}, "resources.r.depends_on", "resource name"),
            ({"type": "T", "depends_on": ["a", 1]}, "resources.r.depends_on", "resource name"),
            (
                {"type": "T", "deletion_policy": "Keep"},
                "resources.r.deletion_policy",
                "must be Delete, Retain or Snapshot, got 'Keep'",
            ),
            ({"type": "T", "external_id": 5}, "resources.r.external_id", "must be a string"),
            ({"type": "T", "condition": 5}, "resources.r.condition", "condition must be"),
        ],
    )
    def test_resource_errors(self, resource, path, fragment):
        err = _fails(
            Template, {"heat_template_version": "2016-10-14", "resources": {"r": resource}}
        )
        assert err.path == path
        assert fragment in err.reason

    @pytest.mark.parametrize(
        "output, path, fragment",
        [
            ("x", "outputs.o", "must be a mapping"),
            ({"description": "d"}, "outputs.o", "needs a value"),
            ({"value": 1, "extra": 1}, "outputs.o.extra", "unknown key"),
            ({"value": 1, "condition": [1]}, "outputs.o.condition", "condition must be"),
            ({"value": 1, "description": 5}, "outputs.o.description", "must be a string"),
        ],
    )
    def test_output_errors(self, output, path, fragment):
        err = _fails(Template, {"heat_template_version": "2016-10-14", "outputs": {"o": output}})
        assert err.path == path
        assert fragment in err.reason

    @pytest.mark.parametrize(
        "environment, path, fragment",
        [
            ({"params": {}}, "environment.params", "environment has wrong section 'params'"),
            ({"parameters": None}, "environment.parameters", "has empty section"),
            ({"parameters": [1]}, "environment.parameters", "must be a mapping"),
            (
                {"resource_registry": {"A": 5}},
                "environment.resource_registry.A",
                "must be a resource type, a template file name or null",
            ),
            (
                {"resource_registry": {"A": "B", "B": "A"}},
                "environment.resource_registry",
                "aliases loop: A -> B -> A",
            ),
        ],
    )
    def test_environment_errors(self, environment, path, fragment):
        err = _fails(
            Template,
            {"heat_template_version": "2016-10-14", "resources": {"r": {"type": "A"}}},
            environment=environment,
        )
        assert err.path == path
        assert fragment in err.reason

    @pytest.mark.parametrize(
        "groups, path, fragment",
        [
            ({}, "parameter_groups", "must be a list"),
            ([{"label": "x"}], "parameter_groups[0]", "parameters list"),
            ([{"parameters": ["nope"]}], "parameter_groups[0].parameters", "not declared"),
            (
                [{"parameters": ["p"]}, {"parameters": ["p"]}],
                "parameter_groups[1].parameters",
                "more than one group",
            ),
        ],
    )
    def test_parameter_group_errors(self, groups, path, fragment):
        err = _fails(
            Template,
            {
                "heat_template_version": "2016-10-14",
                "parameters": {"p": {"type": "string"}},
                "parameter_groups": groups,
            },
        )
        assert err.path == path
        assert fragment in err.reason
