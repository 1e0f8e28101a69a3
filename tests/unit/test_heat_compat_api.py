"""The pieces of Heat's plugin API the adapter provides, against the
behaviour of Heat's own modules (heat/engine/translation.py,
properties.py, constraints.py, common/password_gen.py and their tests in
heat/tests/test_translation_rule.py, test_properties.py)."""

import re

import pytest

from nestedflow import exceptions
from nestedflow.resources.heat_compat import (
    constraints,
    password_gen,
    properties,
    resource,
    support,
    translation,
)

Rule = translation.TranslationRule


def _props(schema, data):
    return properties.Properties(schema, data)


def _apply(rules, data, client_resolve=True):
    props = _props({}, data)
    props.update_translation(rules(props), client_resolve=client_resolve)
    return props.data


def test_add_then_delete_moves_a_deprecated_value():
    """RandomString's rules: ADD to a list, then DELETE the old key."""
    result = _apply(lambda p: [Rule(p, Rule.DELETE, ["sequence"]),
                               Rule(p, Rule.ADD, ["classes"], [{"class": p.data["sequence"]}])],
                    {"sequence": "octdigits"})
    assert result == {"classes": [{"class": "octdigits"}]}


def test_add_with_value_path_and_to_a_non_list():
    assert _apply(lambda p: [Rule(p, Rule.ADD, ["all"], value_path=["one"])],
                  {"all": ["a"], "one": "b"}) == {"all": ["a", "b"], "one": "b"}
    with pytest.raises(ValueError, match='cannot resolve Add rule for non-list translation '
                                         'value "all"'):
        _apply(lambda p: [Rule(p, Rule.ADD, ["all"], ["x"])], {"all": "a"})


def test_replace_inside_list_items_by_value_name():
    """heat/tests/test_translation_rule.py test_replace_rule_list_same:
    each item's ``blue`` becomes its ``red`` (and reads as unset)."""
    data = {"far": [{"blue": "white"}, {"red": "roses"}]}
    result = _apply(lambda p: [Rule(p, Rule.REPLACE, ["far", "red"], None, "blue")], data)
    assert result == {"far": [{"red": "white"}, {"red": "roses"}]}
    with pytest.raises(exceptions.StackValidationFailed,
                       match="Cannot define the following properties at the same time: "
                             "fixed_ips.subnet, fixed_ips.subnet_id"):
        _apply(lambda p: [Rule(p, Rule.REPLACE, ["fixed_ips", "subnet"],
                               value_name="subnet_id")],
               {"fixed_ips": [{"subnet_id": "a", "subnet": "b"}]})


def test_resolve_only_with_client_resolve():
    class Finder:
        def find(self, entity, value):
            return f"{entity}:{value}-id"

    def rules(p):
        return [Rule(p, Rule.RESOLVE, ["nets"], client_plugin=Finder(), finder="find",
                     entity="network")]

    assert _apply(rules, {"nets": ["a", "b"]}) == {"nets": ["network:a-id", "network:b-id"]}
    assert _apply(rules, {"nets": ["a"]}, client_resolve=False) == {"nets": ["a"]}


@pytest.mark.parametrize("kwargs,message", [
    ({"rule": "Bogus", "translation_path": ["a"]}, "There is no rule Bogus"),
    ({"rule": Rule.ADD, "translation_path": []}, '"translation_path" should be non-empty'),
    ({"rule": Rule.ADD, "translation_path": ["a"], "value": "x"},
     '"value" must be list type when rule is Add'),
    ({"rule": Rule.REPLACE, "translation_path": ["a"], "value": 1, "value_name": "b"},
     "mutually exclusive"),
    ({"rule": Rule.RESOLVE, "translation_path": ["a"]}, '"client_plugin" and "finder"'),
])
def test_rule_arguments_are_checked_as_heats(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Rule(None, **kwargs)


def test_properties_read_through_props():
    schema = {"n": properties.Schema(properties.Schema.NUMBER, default=3),
              "s": properties.Schema(properties.Schema.STRING, required=True)}
    props = _props(schema, {"n": "4"})
    assert props["n"] == 4 and props.get("missing", "dflt") == "dflt"
    with pytest.raises(ValueError, match="Property s not assigned"):
        props["s"]
    with pytest.raises(KeyError, match="Invalid Property x"):
        props["x"]
    # A plugin's reparse may swap a property's schema (OS::Heat::Value).
    props.props["n"] = properties.Property(properties.Schema(properties.Schema.STRING), "n")
    assert props["n"] == "4"
    with pytest.raises(exceptions.StackValidationFailed, match="r.properties.s: property "
                                                               "is required"):
        props.validated("r.properties")


def test_schema_type_names():
    assert (constraints.Schema.TYPE, properties.Schema.LIST) == ("type", "List")
    assert properties.Schema("Map").type == properties.Schema("map").type == "map"
    with pytest.raises(ValueError, match="unknown schema type 'Bogus'"):
        properties.Schema("Bogus")


def test_password_gen():
    classes = [password_gen.special_char_class("@", 5),
               password_gen.named_char_class(password_gen.DIGITS, 2)]
    for _ in range(20):
        generated = password_gen.generate_password(10, classes)
        assert len(generated) == 10 and generated.count("@") >= 5
        assert len(re.findall("[0-9]", generated)) >= 2
        assert set(generated) <= set("@0123456789")
    with pytest.raises(ValueError):
        password_gen.generate_password(6, classes)
    with pytest.raises(ValueError, match="unknown character class 'bogus'"):
        password_gen.named_char_class("bogus")


def test_support_status_and_poll_delay():
    assert support.SupportStatus(status="NONSENSE").status == support.UNKNOWN
    with pytest.raises(ValueError, match="previous_status must be SupportStatus"):
        support.SupportStatus(previous_status="5.0.0")
    assert resource.PollDelay(3).period == 3
    with pytest.raises(ValueError):
        resource.PollDelay(0)
    assert (resource.Resource.CREATE, resource.Resource.COMPLETE) == ("CREATE", "COMPLETE")
