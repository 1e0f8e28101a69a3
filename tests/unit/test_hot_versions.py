"""The function table of every heat_template_version, and the values Heat's
own unit tests expect (heat/tests/test_hot.py, cited per test)."""

import json
import pathlib

import pytest

from nestedflow.conf import CONF
from nestedflow.exceptions import StackValidationFailed
from nestedflow.template.functions import (
    ResolveContext,
    core,
    data,
    expressions,
    resolve,
    strings,
    versions,
)
from nestedflow.template.functions import conditions as cond

HEAT_TABLE = json.loads(
    (pathlib.Path(__file__).parent / "data" / "heat_hot_functions.json").read_text())

# Heat's implementation class -> nestedflow's implementation of the same behaviour.
HEAT_CLASSES = {
    "cfn_funcs.GetAZs": core.get_azs,
    "cfn_funcs.Ref": core.ref,
    "cfn_funcs.Select": data.fn_select,
    "cfn_funcs.Join": strings.fn_join,
    "cfn_funcs.Split": strings.fn_split,
    "cfn_funcs.Replace": strings.fn_replace,
    "cfn_funcs.Base64": strings.fn_base64,
    "cfn_funcs.MemberListToMap": data.fn_member_list_to_map,
    "cfn_funcs.ResourceFacade": core.fn_resource_facade,
    "hot_funcs.GetParam": core.get_param,
    "hot_funcs.GetResource": core.get_resource,
    "hot_funcs.GetAttThenSelect": core.get_attr,
    "hot_funcs.GetAtt": core.get_attr,
    "hot_funcs.GetAttAllAttributes": core.get_attr_all,
    "hot_funcs.GetFile": core.get_file,
    "hot_funcs.ResourceFacade": core.resource_facade,
    "hot_funcs.Join": strings.list_join,
    "hot_funcs.JoinMultiple": strings.list_join_multiple,
    "hot_funcs.Replace": strings.str_replace,
    "hot_funcs.ReplaceJson": strings.str_replace_json,
    "hot_funcs.ReplaceJsonStrict": strings.str_replace_strict,
    "hot_funcs.ReplaceJsonVeryStrict": strings.str_replace_vstrict,
    "hot_funcs.StrSplit": strings.str_split,
    "hot_funcs.Digest": strings.digest,
    "hot_funcs.MakeURL": strings.make_url,
    "hot_funcs.Repeat": data.repeat,
    "hot_funcs.RepeatWithMap": data.repeat_with_map,
    "hot_funcs.RepeatWithNestedLoop": data.repeat_nested,
    "hot_funcs.MapMerge": data.map_merge,
    "hot_funcs.MapReplace": data.map_replace,
    "hot_funcs.ListConcat": data.list_concat,
    "hot_funcs.ListConcatUnique": data.list_concat_unique,
    "hot_funcs.Filter": data.filter_values,
    "hot_funcs.Contains": data.contains,
    "hot_funcs.Yaql": expressions.yaql,
    "hot_funcs.If": cond.if_,
    "hot_funcs.IfNullable": cond.if_nullable,
    "hot_funcs.Equals": cond.equals,
    "hot_funcs.Not": cond.not_,
    "hot_funcs.And": cond.and_,
    "hot_funcs.Or": cond.or_,
    "hot_funcs.Removed": versions.REMOVED,
}


def test_every_version_of_heat_is_known():
    assert list(HEAT_TABLE["versions"]) == list(versions.HOT_VERSIONS)


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_function_table_equals_heats(version):
    heat = HEAT_TABLE["versions"][version]["functions"]
    ours = versions.function_table(version)
    assert sorted(ours) == sorted(heat)
    for name, heat_class in heat.items():
        assert ours[name] is HEAT_CLASSES[heat_class], (version, name)


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_condition_table_equals_heats(version):
    heat = HEAT_TABLE["versions"][version].get("condition_functions", {})
    ours = versions.condition_table(version)
    for name, heat_class in heat.items():
        assert ours[name] is HEAT_CLASSES[heat_class], (version, name)
    # Heat's _parser_condition_functions: every other function is invalid.
    for name in set(ours) - set(heat):
        assert isinstance(ours[name], versions.Refused), (version, name)


def _ctx(version="2021-04-16", **kwargs):
    return ResolveContext(version=version, **kwargs)


def _fails(snippet, ctx, path="outputs.o.value"):
    with pytest.raises(StackValidationFailed) as info:
        resolve(snippet, ctx, path)
    return info.value


class TestHeatValues:
    def test_digest(self):
        """heat/tests/test_hot.py HOTemplateTest.test_digest."""
        assert (resolve({"digest": ["md5", "foobar"]}, _ctx("2015-04-30"))
                == "3858f62230ac3c915f300c664312c63f")

    def test_digest_errors(self):
        """test_digest_invalid_types, _incorrect_number_arguments, _invalid_algorithm."""
        ctx = _ctx("2015-04-30")
        for args in ("invalid", {"foo": "invalid"}, [123]):
            assert "must be a list of strings" in _fails({"digest": args}, ctx).reason
        for args in ([], ["foo"], ["md5"], ["md5", "foo", "bar"]):
            assert 'usage: ["<algorithm>", "<value>"]' in _fails({"digest": args}, ctx).reason
        assert "algorithm must be one of" in _fails(
            {"digest": ["invalid_algorithm", "foobar"]}, ctx).reason

    def test_filter(self):
        """test_filter, test_filter_wrong_args_type/_number, _dict, _str, _str_values."""
        ctx = _ctx("2017-02-24")
        assert resolve({"filter": [[None], [1, None, 4, 2, None]]}, ctx) == [1, 4, 2]
        for args in ("foo", [[None], [1, 2], "foo"], [[None], {"a": 1}], [["a"], "abcd"],
                     ["abcd", ["a", "b", "c", "d"]]):
            _fails({"filter": args}, ctx)

    @pytest.mark.parametrize("args, expected", [
        # test_yaql, _list_input, _string_input, _int_input, _data_as_function, _merge
        ({"expression": "$.data.var1.sum()", "data": {"var1": [1, 2, 3, 4]}}, 10),
        ({"expression": "$.data.sum()", "data": [1, 2, 3, 4]}, 10),
        ({"expression": "$.data", "data": "whynotastring"}, "whynotastring"),
        ({"expression": "$.data + 2", "data": 2}, 4),
        ({"expression": "$.data.var1.len()",
          "data": {"var1": {"list_join": ["", ["1", "2"]]}}}, 2),
        ({"expression": "$.data.d.reduce($1.mergeWith($2))",
          "data": {"d": [{"a": [1]}, {"a": [2]}, {"a": [3]}]}}, {"a": [1, 2, 3]}),
    ])
    def test_yaql(self, args, expected):
        """heat/tests/test_hot.py HOTemplateTest.test_yaql* (newton templates)."""
        assert resolve({"yaql": args}, _ctx("2016-10-14")) == expected

    def test_yaql_errors(self):
        """test_yaql_bogus_keys, _invalid_syntax, _non_map_args, _invalid_expression."""
        ctx = _ctx("2016-10-14")
        _fails({"yaql": {"expression": "1 + 3", "data": {}, "bogus": ""}}, ctx)
        _fails({"yaql": {"wrong": "wrong_expr", "wrong_data": "mustbeamap"}}, ctx)
        assert "must be a map" in _fails({"yaql": "invalid"}, ctx).reason
        err = _fails({"yaql": {"expression": "invalid(", "data": {}}}, ctx)
        assert "bad expression" in err.reason and "unexpected end of statement" in err.reason
        assert err.path == "outputs.o.value.yaql.expression"

    def test_yaql_limits(self):
        """Heat's [yaql] limit_iterators (200) and memory_quota (10000) bound a run."""
        ctx = _ctx()
        err = _fails({"yaql": {"expression": "range(1000).toList()"}}, ctx)
        assert "Collection length exceeds 200 elements" in err.reason
        assert err.path == "outputs.o.value.yaql"
        err = _fails({"yaql": {"expression": "'abc' * 100000"}}, ctx)
        assert "too much memory" in err.reason
        CONF.set_override("limit_iterators", 2000, group="yaql")
        try:
            assert len(resolve({"yaql": {"expression": "range(1000).toList()"}}, ctx)) == 1000
        finally:
            CONF.clear_override("limit_iterators", group="yaql")

    @pytest.mark.parametrize("args, expected", [
        # test_make_url_basic, _ipv6, _ipv6_ready, _port_string, _port_int,
        # _username, _username_password, _fragment, _file_leading_slash
        ({"scheme": "http", "host": "example.com", "path": "/foo/bar"},
         "http://example.com/foo/bar"),
        ({"scheme": "http", "host": "::1", "path": "/foo/bar"}, "http://[::1]/foo/bar"),
        ({"scheme": "http", "host": "[::1]", "path": "/foo/bar"}, "http://[::1]/foo/bar"),
        ({"scheme": "https", "host": "example.com", "port": "80", "path": "/foo/bar"},
         "https://example.com:80/foo/bar"),
        ({"scheme": "https", "host": "example.com", "port": 80, "path": "/foo/bar"},
         "https://example.com:80/foo/bar"),
        ({"scheme": "http", "username": "wibble", "host": "example.com", "path": "/foo/bar"},
         "http://wibble@example.com/foo/bar"),
        ({"scheme": "http", "username": "wibble", "password": "blarg", "host": "example.com",
          "path": "/foo/bar"}, "http://wibble:blarg@example.com/foo/bar"),
        ({"scheme": "http", "host": "example.com", "path": "foo/bar", "fragment": "baz"},
         "http://example.com/foo/bar#baz"),
        ({"scheme": "file", "path": "/foo/bar"}, "file:///foo/bar"),
    ])
    def test_make_url(self, args, expected):
        """heat/tests/test_hot.py HOTemplateTest.test_make_url_* (pike templates)."""
        assert resolve({"make_url": args}, _ctx("2017-09-01")) == expected

    def test_make_url_query(self):
        """test_make_url_query: either order of the query keys."""
        args = {"scheme": "http", "host": "example.com", "path": "/foo/?bar",
                "query": {"foo#": "bar & baz", "blarg": "/wib=ble/"}}
        assert resolve({"make_url": args}, _ctx("2017-09-01")) in (
            "http://example.com/foo/%3Fbar?foo%23=bar+%26+baz&blarg=/wib%3Dble/",
            "http://example.com/foo/%3Fbar?blarg=/wib%3Dble/&foo%23=bar+%26+baz")

    def test_make_url_errors(self):
        """test_make_url_port_invalid_high/_low/_string, _bad_args_type, _invalid_key."""
        ctx = _ctx("2017-09-01")
        for port in (100000, "0", "1.1"):
            _fails({"make_url": {"scheme": "https", "host": "example.com", "port": port}}, ctx)
        _fails({"make_url": "http://example.com/foo/bar"}, ctx)
        assert "invalid arguments: foo" in _fails(
            {"make_url": {"scheme": "http", "host": "example.com", "foo": "bar"}}, ctx).reason

    def test_str_replace_vstrict_and_list_concat_unique(self):
        """test_str_replace_vstrict (empty value refused) and test_list_concat_unique."""
        ctx = _ctx()
        err = _fails({"str_replace_vstrict": {"template": "a b", "params": {"a": ""}}}, ctx)
        assert "undefined or empty value" in err.reason
        assert resolve({"list_concat_unique": [["v1", "v2"], ["v2", "v43"]]}, ctx) == [
            "v1", "v2", "v43"]
        assert resolve({"contains": ["v1", ["v1", "v2"]]}, ctx) is True

    def test_repeat_without_permutations(self):
        """test_repeat_with_no_nested_loop: items paired by position."""
        snippet = {"repeat": {"template": {"network": "%net%", "port": "%port%"},
                              "for_each": {"%net%": ["n1", "n2"], "%port%": ["p1", "p2"]},
                              "permutations": False}}
        assert resolve(snippet, _ctx()) == [{"network": "n1", "port": "p1"},
                                           {"network": "n2", "port": "p2"}]


class TestVersionGating:
    def test_function_of_a_later_version_is_refused_with_version_and_path(self):
        err = _fails({"yaql": {"expression": "1"}}, _ctx("2015-04-30"))
        assert err.path == "outputs.o.value.yaql"
        assert "'yaql' needs heat_template_version 2016-10-14 or later" in err.reason
        assert "this template is 2015-04-30" in err.reason

    def test_removed_cfn_function_is_refused(self):
        err = _fails({"Fn::Select": [0, ["a"]]}, _ctx("2015-10-15"))
        assert "not supported in heat_template_version 2015-10-15" in err.reason
        assert resolve({"Fn::Select": [0, ["a"]]}, _ctx("2015-04-30")) == "a"

    def test_unknown_fn_function_is_refused(self):
        err = _fails({"x": [{"Fn::GetAtt": ["a", "b"]}]}, _ctx())
        assert err.path == "outputs.o.value.x[0].Fn::GetAtt"
        assert "unknown function 'Fn::GetAtt'" in err.reason

    def test_condition_function_outside_conditions_is_refused(self):
        err = _fails({"equals": [1, 1]}, _ctx())
        assert "only allowed in conditions" in err.reason

    def test_map_that_merely_looks_like_a_function_is_data(self):
        for snippet in ({"get_params": "x"}, {"Type": "x"}, {"get_param": "x", "y": 1}):
            assert resolve(snippet, _ctx()) == snippet

    def test_get_attr_all_attributes_form_only_from_2015_10_15(self):
        calls = []
        ctx = _ctx("2015-10-15", get_attr=lambda *a: calls.append(a) or {"x": 1})
        assert resolve({"get_attr": ["server"]}, ctx) == {"x": 1}
        assert calls == [("server", None, [])]
        assert "expects [resource, attribute" in _fails(
            {"get_attr": ["server"]}, _ctx("2015-04-30")).reason

    def test_list_join_of_several_lists_and_json_from_2015_10_15(self):
        assert resolve({"list_join": [",", ["a"], [{"b": 1}]]}, _ctx("2015-10-15")) == (
            'a,{"b": 1}')
        _fails({"list_join": [",", ["a"], ["b"]]}, _ctx("2015-04-30"))

    def test_release_names_are_versions(self):
        assert versions.RELEASE_NAMES["wallaby"] == versions.LATEST


class TestParseChecks:
    """Arguments Heat refuses when it parses a function (its constructors and
    validate methods), checked without resolving: outputs and conditions."""

    @pytest.mark.parametrize("snippet, fragment", [
        ({"get_attr": "include nsx\n"}, "arguments must be [resource]"),
        ({"list_join": {"get_param": "x"}}, "expects [delimiter, list, ...]"),
        ({"str_replace": {"template": "x"}}, "syntax is"),
        ({"repeat": {"for_each": [], "template": "x"}}, "must contain a map"),
        ({"yaql": {"expression": "invalid("}}, "bad expression"),
        ({"make_url": {"host": "h", "bogus": 1}}, "invalid arguments: bogus"),
        ({"if": ["c", 1]}, "value_if_false]"),
        ({"resource_facade": "nope"}, "expects one of metadata"),
    ])
    def test_refused_when_parsed(self, snippet, fragment):
        from nestedflow.template.functions import check_functions

        with pytest.raises(StackValidationFailed) as info:
            check_functions({"x": snippet}, _ctx("2018-08-31"), "outputs.o.value")
        assert fragment in info.value.reason
        assert info.value.path.startswith("outputs.o.value.x.")

    def test_values_are_not_needed(self):
        from nestedflow.template.functions import check_functions

        check_functions({"list_join": [",", {"get_param": "unknown"}]}, _ctx(), "o")
        check_functions({"str_split": [",", {"get_attr": ["a", "b"]}, 9]}, _ctx(), "o")
