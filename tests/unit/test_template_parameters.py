import pytest

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties import constraints
from nestedflow.template.parameters import redact, resolve_parameters
from nestedflow.template.template import Template


def _template(parameters, environment=None):
    return Template(
        {"heat_template_version": "2016-10-14", "parameters": parameters},
        environment=environment,
    )


def _fails(fn, *args, **kwargs):
    with pytest.raises(StackValidationFailed) as info:
        fn(*args, **kwargs)
    return info.value


class TestConstraints:
    def test_length_messages(self):
        c = constraints.Length(6, 8)
        c.validate("abcdefg")
        with pytest.raises(ValueError, match="^length must be between 6 and 8 characters$"):
            c.validate("abc")
        with pytest.raises(ValueError, match="^length must be at least 1 items$"):
            constraints.Length(min=1).validate([])
        assert constraints.Length(max=2).description == "length must be at most 2 characters"

    def test_range(self):
        constraints.Range(1, 10).validate(10)
        with pytest.raises(ValueError, match="^0 must be at least 1$"):
            constraints.Range(min=1).validate(0)
        with pytest.raises(ValueError, match="is not a number"):
            constraints.Range(max=1).validate("x")

    def test_allowed_values(self):
        c = constraints.AllowedValues(["a", "b"])
        c.validate("a")
        c.validate(["a", "b"])  # lists: every item
        with pytest.raises(ValueError) as info:
            c.validate(3)
        assert str(info.value) == "3 is not in the allowed values ['a', 'b']"
        assert c.description == "must be one of ['a', 'b']"

    def test_allowed_pattern_is_a_full_match(self):
        c = constraints.AllowedPattern("[a-z]+")
        c.validate("abc")
        with pytest.raises(ValueError, match="does not match pattern"):
            c.validate("abc1")

    def test_modulo(self):
        c = constraints.Modulo(2, 1)
        c.validate(5)
        with pytest.raises(ValueError, match="^4 must be a multiple of 2 with an offset of 1$"):
            c.validate(4)

    def test_custom_description_replaces_message(self):
        c = constraints.Range(1, 2, description="pick one or two")
        assert c.description == "pick one or two"
        with pytest.raises(ValueError, match="^pick one or two$"):
            c.validate(3)

    def test_from_hot_builds_every_kind(self):
        built = constraints.from_hot(
            [
                {"length": {"min": 6, "max": 8}, "description": "6 to 8"},
                {"range": {"min": 1}},
                {"allowed_values": ["a"]},
                {"allowed_pattern": "[a-z]*"},
                {"modulo": {"step": 2, "offset": 0}},
            ],
            "parameters.p.constraints",
        )
        assert [type(c).__name__ for c in built] == [
            "Length",
            "Range",
            "AllowedValues",
            "AllowedPattern",
            "Modulo",
        ]
        assert built[0].description == "6 to 8"
        assert constraints.from_hot(None, "x") == []

    @pytest.mark.parametrize(
        "items, path, fragment",
        [
            ({"length": {}}, "parameters.p.constraints", "must be a list"),
            (["length"], "parameters.p.constraints[0]", "must be a mapping"),
            ([{"size": 1}], "parameters.p.constraints[0]", "unknown constraint 'size'"),
            ([{"description": "x"}], "parameters.p.constraints[0]", "exactly one"),
            (
                [{"range": {"min": 1}, "length": {"min": 1}}],
                "parameters.p.constraints[0]",
                "exactly one",
            ),
            (
                [{"length": {"min": 9, "max": 1}}],
                "parameters.p.constraints[0].length",
                "greater than max",
            ),
            ([{"length": {"low": 1}}], "parameters.p.constraints[0].length", "only min and max"),
            ([{"range": {}}], "parameters.p.constraints[0].range", "needs min or max"),
            ([{"range": {"min": "a"}}], "parameters.p.constraints[0].range", "must be a number"),
            (
                [{"allowed_values": "a"}],
                "parameters.p.constraints[0].allowed_values",
                "must be a list",
            ),
            (
                [{"allowed_pattern": "("}],
                "parameters.p.constraints[0].allowed_pattern",
                "invalid allowed_pattern",
            ),
            ([{"modulo": {"step": 2}}], "parameters.p.constraints[0].modulo", "step and offset"),
            (
                [{"modulo": {"step": 0, "offset": 0}}],
                "parameters.p.constraints[0].modulo",
                "must not be 0",
            ),
            (
                [{"length": {"min": 1}, "description": 5}],
                "parameters.p.constraints[0]",
                "description must be a string",
            ),
        ],
    )
    def test_from_hot_errors(self, items, path, fragment):
        err = _fails(constraints.from_hot, items, "parameters.p.constraints")
        assert err.path == path
        assert fragment in err.reason


class TestSchema:
    def test_parsed_schema(self):
        tmpl = _template(
            {
                "flavor": {
                    "type": "string",
                    "default": "m1",
                    "label": "Flavor",
                    "description": "size",
                    "hidden": "true",
                    "constraints": [{"allowed_values": ["m1", "m2"]}],
                },
                "count": {"type": "number", "default": "3"},
                "names": {"type": "comma_delimited_list"},
            }
        )
        flavor = tmpl.parameters["flavor"]
        assert (flavor.type, flavor.default, flavor.hidden, flavor.label) == (
            "string",
            "m1",
            True,
            "Flavor",
        )
        assert flavor.has_default and len(flavor.constraints) == 1
        assert tmpl.parameters["count"].default == 3
        assert not tmpl.parameters["names"].has_default

    @pytest.mark.parametrize(
        "spec, path, fragment",
        [
            ("string", "parameters.p", "must be a mapping"),
            ({"default": 1}, "parameters.p", "needs a type"),
            ({"type": "float"}, "parameters.p.type", "unknown type 'float'"),
            ({"type": "string", "secret": True}, "parameters.p.secret", "unknown key"),
            ({"type": "string", "hidden": "maybe"}, "parameters.p.hidden", "boolean"),
            ({"type": "string", "label": 3}, "parameters.p.label", "must be a string"),
            (
                {"type": "number", "default": "abc"},
                "parameters.p.default",
                "expected number, got 'abc'",
            ),
            (
                {"type": "string", "constraints": [{"range": {"min": 1}}]},
                "parameters.p.constraints[0]",
                "range constraint does not apply",
            ),
        ],
    )
    def test_schema_errors(self, spec, path, fragment):
        err = _fails(_template, {"p": spec})
        assert err.path == path
        assert fragment in err.reason

    def test_section_must_be_mapping(self):
        assert _fails(_template, ["p"]).path == "parameters"

    def test_hidden_default_is_not_echoed(self):
        err = _fails(_template, {"p": {"type": "number", "default": "abc", "hidden": True}})
        assert "abc" not in str(err)


class TestResolve:
    def test_coercion_of_every_type(self):
        tmpl = _template(
            {
                "s": {"type": "string"},
                "n": {"type": "number"},
                "f": {"type": "number"},
                "b": {"type": "boolean"},
                "j": {"type": "json"},
                "j2": {"type": "json"},
                "l": {"type": "comma_delimited_list"},
                "l2": {"type": "comma_delimited_list"},
                "e": {"type": "comma_delimited_list"},
            }
        )
        resolved = resolve_parameters(
            tmpl,
            {
                "s": 5,
                "n": "5",
                "f": "2.5",
                "b": "yes",
                "j": '{"a": [1]}',
                "j2": [1],
                "l": " a, b ,c",
                "l2": ["x"],
                "e": "",
            },
        )
        assert resolved == {
            "s": "5",
            "n": 5,
            "f": 2.5,
            "b": True,
            "j": {"a": [1]},
            "j2": [1],
            "l": ["a", "b", "c"],
            "l2": ["x"],
            "e": [],
        }

    @pytest.mark.parametrize(
        "ptype, value, fragment",
        [
            ("number", "five", "expected number, got 'five'"),
            ("boolean", "perhaps", "expected boolean"),
            ("json", "{nope", "not valid JSON"),
            ("json", "5", "expected a JSON map or list"),
            ("string", {"a": 1}, "expected string"),
            ("comma_delimited_list", {"a": 1}, "expected a comma-delimited list"),
        ],
    )
    def test_bad_values(self, ptype, value, fragment):
        err = _fails(resolve_parameters, _template({"p": {"type": ptype}}), {"p": value})
        assert err.path == "parameters.p"
        assert fragment in err.reason

    def test_precedence(self):
        params = {name: {"type": "string", "default": "template"} for name in "abcd"}
        params["e"] = {"type": "string"}
        env = {
            "parameter_defaults": {
                "b": "env_default",
                "c": "env_default",
                "d": "env_default",
                "e": "env_default",
                "undeclared": "fine",
            },
            "parameters": {"c": "env", "d": "env"},
        }
        resolved = resolve_parameters(_template(params, env), {"d": "explicit"})
        assert resolved == {
            "a": "template",
            "b": "env_default",
            "c": "env",
            "d": "explicit",
            "e": "env_default",
        }

    def test_environment_may_be_yaml_text(self):
        tmpl = _template({"a": {"type": "number"}}, "parameters:\n  a: 7\n")
        assert resolve_parameters(tmpl) == {"a": 7}

    def test_missing_value(self):
        err = _fails(resolve_parameters, _template({"key": {"type": "string"}}))
        assert str(err) == "parameters.key: value is required"

    def test_unknown_explicit_parameter(self):
        err = _fails(resolve_parameters, _template({}), {"nope": 1})
        assert str(err) == "parameters.nope: unknown parameter"

    def test_unknown_environment_parameter(self):
        err = _fails(resolve_parameters, _template({}, {"parameters": {"nope": 1}}))
        assert str(err) == "environment.parameters.nope: unknown parameter"

    def test_constraint_failure_names_value(self):
        tmpl = _template(
            {"size": {"type": "string", "constraints": [{"allowed_values": ["s", "m"]}]}}
        )
        err = _fails(resolve_parameters, tmpl, {"size": "xl"})
        assert str(err) == "parameters.size: 'xl' is not in the allowed values ['s', 'm']"

    def test_custom_description_with_value(self):
        tmpl = _template(
            {
                "port": {
                    "type": "number",
                    "constraints": [
                        {"range": {"min": 1, "max": 65535}, "description": "a TCP port"}
                    ],
                }
            }
        )
        err = _fails(resolve_parameters, tmpl, {"port": "70000"})
        assert str(err) == "parameters.port: a TCP port (value 70000)"

    def test_hidden_constraint_failure_hides_value(self):
        tmpl = _template(
            {
                "password": {
                    "type": "string",
                    "hidden": True,
                    "constraints": [{"allowed_pattern": "[a-z]{8,}"}],
                }
            }
        )
        err = _fails(resolve_parameters, tmpl, {"password": "s3cr3t"})
        assert "s3cr3t" not in str(err)
        assert str(err) == "parameters.password: must match pattern '[a-z]{8,}'"

    def test_hidden_type_failure_hides_value(self):
        tmpl = _template({"pin": {"type": "number", "hidden": True}})
        err = _fails(resolve_parameters, tmpl, {"pin": "s3cr3t"})
        assert "s3cr3t" not in str(err)
        assert err.path == "parameters.pin"

    def test_default_must_satisfy_constraints_even_when_a_value_is_given(self):
        """Heat's parameters.Schema._validate_default: the template is refused
        ("Invalid default 0 (...)") whatever value is passed."""
        err = _fails(_template, {"n": {"type": "number", "default": 0,
                                       "constraints": [{"range": {"min": 1}}]}})
        assert (err.path, err.reason) == ("parameters.n.default",
                                          "Invalid default 0 (0 must be at least 1)")
        hidden = _fails(_template, {"p": {"type": "string", "default": "", "hidden": True,
                                          "constraints": [{"allowed_pattern": "[a-z]+"}]}})
        assert "''" not in str(hidden) and "Invalid default (" in str(hidden)

    def test_list_constraints_check_items_and_length(self):
        tmpl = _template(
            {
                "zones": {
                    "type": "comma_delimited_list",
                    "constraints": [{"length": {"max": 2}}, {"allowed_values": ["a", "b", "c"]}],
                }
            }
        )
        assert resolve_parameters(tmpl, {"zones": "a,b"}) == {"zones": ["a", "b"]}
        assert "at most 2 items" in _fails(resolve_parameters, tmpl, {"zones": "a,b,c"}).reason
        assert "'d' is not in" in _fails(resolve_parameters, tmpl, {"zones": "a,d"}).reason

    def test_pseudo_parameters_are_merged(self):
        tmpl = _template({"a": {"type": "string", "default": "x"}})
        pseudo = {"OS::stack_name": "web", "OS::stack_id": "id-1", "OS::project_id": ""}
        assert resolve_parameters(tmpl, pseudo=pseudo) == {"a": "x", **pseudo}

    def test_null_explicit_value_falls_back_to_default(self):
        tmpl = _template({"a": {"type": "string", "default": "x"}})
        assert resolve_parameters(tmpl, {"a": None}) == {"a": "x"}


def test_redact():
    tmpl = _template({"password": {"type": "string", "hidden": True}, "user": {"type": "string"}})
    resolved = resolve_parameters(tmpl, {"password": "pw", "user": "me"})
    assert redact(tmpl, resolved) == {"password": "******", "user": "me"}
    assert resolved["password"] == "pw"
