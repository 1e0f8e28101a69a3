import copy

import pytest

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.constraints import AllowedValues, Length, Range
from nestedflow.properties.schema import (
    UNRESOLVED,
    Attribute,
    Property,
    Types,
    contains_unresolved,
    validate_properties,
)


def _error(prop, value, path="p"):
    with pytest.raises(StackValidationFailed) as info:
        prop.coerce(value, path)
    return info.value


class TestCoerce:
    @pytest.mark.parametrize(
        "value, expected", [(5, 5), ("5", 5), (" 7 ", 7), (3.0, 3), ("-2", -2)]
    )
    def test_integer(self, value, expected):
        result = Property(Types.INTEGER).coerce(value, "p")
        assert result == expected and isinstance(result, int)

    @pytest.mark.parametrize("value", ["abc", 2.5, True, [1], None, "1.5"])
    def test_integer_rejects(self, value):
        err = _error(Property(Types.INTEGER), value, "resources.web.properties.port")
        assert err.path == "resources.web.properties.port"
        assert err.reason == f"expected integer, got {value!r}"

    def test_integer_message_matches_contract(self):
        err = _error(Property(Types.INTEGER), "abc", "resources.web.properties.port")
        assert str(err) == "resources.web.properties.port: expected integer, got 'abc'"

    @pytest.mark.parametrize("value, expected", [("2.5", 2.5), ("5", 5), (4, 4), (1.5, 1.5)])
    def test_number(self, value, expected):
        result = Property(Types.NUMBER).coerce(value, "p")
        assert result == expected and type(result) is type(expected)

    @pytest.mark.parametrize("value", ["x", False, {}, "nan", "inf"])
    def test_number_rejects(self, value):
        assert "expected number" in _error(Property(Types.NUMBER), value).reason

    @pytest.mark.parametrize(
        "value, expected",
        [
            (True, True),
            ("true", True),
            ("Yes", True),
            ("1", True),
            (1, True),
            (False, False),
            ("false", False),
            ("no", False),
            ("0", False),
            (0, False),
        ],
    )
    def test_boolean(self, value, expected):
        assert Property(Types.BOOLEAN).coerce(value, "p") is expected

    @pytest.mark.parametrize("value", ["maybe", 2, None, []])
    def test_boolean_rejects(self, value):
        assert _error(Property(Types.BOOLEAN), value).reason.startswith("expected boolean")

    @pytest.mark.parametrize(
        "value, expected", [("x", "x"), (5, "5"), (2.5, "2.5"), (True, "true")]
    )
    def test_string(self, value, expected):
        assert Property(Types.STRING).coerce(value, "p") == expected

    def test_string_rejects_map(self):
        assert _error(Property(Types.STRING), {"a": 1}).reason == "expected string, got {'a': 1}"

    def test_long_values_are_shortened_in_messages(self):
        reason = _error(Property(Types.STRING), ["x" * 200]).reason
        assert reason.endswith("...") and len(reason) < 100

    def test_list_elements_are_coerced_with_indexed_paths(self):
        prop = Property(Types.LIST, schema=Property(Types.INTEGER))
        assert prop.coerce(["1", 2], "p") == [1, 2]
        err = _error(prop, [1, "x"], "resources.a.properties.ports")
        assert err.path == "resources.a.properties.ports[1]"

    def test_list_rejects_string(self):
        assert _error(Property(Types.LIST), "a,b").reason == "expected list, got 'a,b'"

    def test_map_with_schema_is_checked_recursively(self):
        prop = Property(
            Types.MAP,
            schema={
                "port": Property(Types.INTEGER, required=True),
                "proto": Property(Types.STRING, default="tcp"),
            },
        )
        assert prop.coerce({"port": "80"}, "p") == {"port": 80, "proto": "tcp"}
        assert _error(prop, {"port": 1, "x": 2}, "r.props.rule").path == "r.props.rule.x"
        err = _error(prop, {}, "r.props.rule")
        assert (err.path, err.reason) == ("r.props.rule.port", "property is required")

    def test_free_form_map(self):
        assert Property(Types.MAP).coerce({"a": [1]}, "p") == {"a": [1]}
        assert _error(Property(Types.MAP), [1]).reason == "expected map, got [1]"

    def test_any_passes_through(self):
        value = {"a": [1, {"b": None}]}
        assert Property(Types.ANY).coerce(value, "p") == value

    def test_constraints_apply_after_coercion(self):
        prop = Property(Types.INTEGER, constraints=[Range(1, 10)])
        assert prop.coerce("10", "p") == 10
        err = _error(prop, "11", "resources.a.properties.count")
        assert str(err) == "resources.a.properties.count: 11 must be between 1 and 10"

    def test_custom_constraint_description_is_the_message(self):
        prop = Property(Types.STRING, constraints=[Length(min=3, description="too short")])
        assert _error(prop, "ab").reason == "too short"

    def test_unresolved_skips_checks(self):
        prop = Property(Types.INTEGER, constraints=[Range(1, 2)])
        assert prop.coerce(UNRESOLVED, "p") is UNRESOLVED
        lst = Property(Types.LIST, schema=Property(Types.INTEGER))
        assert lst.coerce(["x", UNRESOLVED], "p") == ["x", UNRESOLVED]

    def test_bad_schema_definitions_are_programming_errors(self):
        with pytest.raises(ValueError):
            Property("float")
        with pytest.raises(ValueError):
            Property(Types.LIST, schema={"a": Property(Types.STRING)})
        with pytest.raises(ValueError):
            Property(Types.MAP, schema=Property(Types.STRING))
        with pytest.raises(ValueError):
            Property(Types.STRING, schema=Property(Types.STRING))
        with pytest.raises(ValueError):
            Attribute(type="float")


class TestUnresolved:
    def test_repr_and_identity_survive_copies(self):
        assert repr(UNRESOLVED) == "<unresolved>"
        assert copy.deepcopy({"a": UNRESOLVED})["a"] is UNRESOLVED
        assert copy.copy(UNRESOLVED) is UNRESOLVED

    def test_contains_unresolved(self):
        assert contains_unresolved({"a": [1, {"b": UNRESOLVED}]})
        assert not contains_unresolved({"a": [1, {"b": None}]})

    def test_contains_unresolved_on_deep_nesting(self):
        deep = UNRESOLVED
        for _ in range(5000):
            deep = [deep]
        assert contains_unresolved(deep)


SCHEMA = {
    "name": Property(Types.STRING, required=True),
    "size": Property(Types.INTEGER, default=1, constraints=[Range(min=1)]),
    "flavor": Property(Types.STRING, constraints=[AllowedValues(["small", "big"])]),
    "tags": Property(Types.LIST, default=["a"]),
}


class TestValidateProperties:
    def test_defaults_and_coercion(self):
        result = validate_properties(SCHEMA, {"name": "x", "size": "3"}, "resources.r.properties")
        assert result == {"name": "x", "size": 3, "flavor": None, "tags": ["a"]}

    def test_defaults_are_not_shared(self):
        first = validate_properties(SCHEMA, {"name": "x"}, "p")
        first["tags"].append("b")
        assert validate_properties(SCHEMA, {"name": "x"}, "p")["tags"] == ["a"]

    def test_unknown_property(self):
        with pytest.raises(StackValidationFailed) as info:
            validate_properties(SCHEMA, {"name": "x", "colour": 1}, "resources.r.properties")
        assert str(info.value) == "resources.r.properties.colour: unknown property"

    def test_missing_required(self):
        with pytest.raises(StackValidationFailed) as info:
            validate_properties(SCHEMA, None, "resources.r.properties")
        assert str(info.value) == "resources.r.properties.name: property is required"

    def test_null_counts_as_absent(self):
        result = validate_properties(SCHEMA, {"name": "x", "size": None}, "p")
        assert result["size"] == 1

    def test_constraint_failure(self):
        with pytest.raises(StackValidationFailed) as info:
            validate_properties(SCHEMA, {"name": "x", "flavor": "huge"}, "resources.r.properties")
        assert info.value.path == "resources.r.properties.flavor"
        assert info.value.reason == "'huge' is not in the allowed values ['small', 'big']"

    def test_not_a_mapping(self):
        with pytest.raises(StackValidationFailed) as info:
            validate_properties(SCHEMA, ["name"], "resources.r.properties")
        assert info.value.path == "resources.r.properties"
        assert "must be a mapping" in info.value.reason

    def test_unresolved_values_satisfy_required_and_skip_checks(self):
        result = validate_properties(
            SCHEMA, {"name": UNRESOLVED, "size": UNRESOLVED, "tags": [UNRESOLVED]}, "p"
        )
        assert result["name"] is UNRESOLVED and result["size"] is UNRESOLVED
        assert result["tags"] == [UNRESOLVED]


def test_attribute_defaults():
    attr = Attribute("the output")
    assert (attr.description, attr.type) == ("the output", Types.ANY)
