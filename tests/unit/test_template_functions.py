import pytest

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.schema import UNRESOLVED
from nestedflow.template.functions import (
    ResolveContext,
    attribute_references,
    computes_references,
    find_references,
    references,
    resolve,
    select_path,
)
from nestedflow.template.functions.versions import LATEST, function_table

ATTRIBUTES = {
    ("server", "networks"): {"private": [{"addr": "10.0.0.5"}, {"addr": "10.0.0.6"}]},
    ("server", "name"): "web-1",
    ("db", "config"): {"port": 5432},
}


def _get_attr(name, attr, path_list):
    # A fake engine: look the attribute up, then apply the path like a real engine would.
    return select_path(ATTRIBUTES[(name, attr)], path_list)


@pytest.fixture
def ctx():
    return ResolveContext(
        parameters={
            "name": "web",
            "count": 3,
            "config": {"servers": [{"host": "a"}, {"host": "b"}], "port": 80},
            "zones": ["az1", "az2"],
        },
        files={"init.sh": "#!/bin/sh\necho hi\n"},
        get_resource=lambda name: f"{name}-id",
        get_attr=_get_attr,
    )


def _fails(snippet, ctx, path="resources.r.properties.p"):
    with pytest.raises(StackValidationFailed) as info:
        resolve(snippet, ctx, path)
    return info.value


def test_function_names():
    latest = function_table(LATEST)
    assert {"get_param", "get_attr", "str_replace", "repeat", "yaql", "if"} <= set(latest)
    assert "Fn::Join" in function_table("2013-05-23")


def test_plain_data_is_copied_through(ctx):
    snippet = {"a": [1, {"b": "c"}], "two": {"keys": 1, "x": 2}}
    assert resolve(snippet, ctx) == snippet


class TestGetParam:
    def test_simple_and_nested(self, ctx):
        assert resolve({"get_param": "name"}, ctx) == "web"
        assert resolve({"get_param": ["config", "servers", 1, "host"]}, ctx) == "b"
        assert resolve({"get_param": ["config", "servers", "0", "host"]}, ctx) == "a"

    def test_missing_path_gives_empty_string_like_heat(self, ctx):
        assert resolve({"get_param": ["config", "nope"]}, ctx) == ""
        assert resolve({"get_param": ["zones", 7]}, ctx) == ""

    def test_unknown_parameter(self, ctx):
        err = _fails({"get_param": "nope"}, ctx)
        assert str(err) == "resources.r.properties.p.get_param: unknown parameter 'nope'"

    def test_bad_arguments(self, ctx):
        assert "expects a parameter name" in _fails({"get_param": 5}, ctx).reason
        # Heat's GetParam answers "" for a path it cannot follow.
        assert resolve({"get_param": ["config", 1.5]}, ctx) == ""
        assert resolve({"get_param": ["name", "x"]}, ctx) == ""

    def test_computed_name(self, ctx):
        assert (
            resolve(
                {"get_param": [{"str_replace": {"template": "na_e", "params": {"_": "m"}}}]}, ctx
            )
            == "web"
        )


class TestResourceFunctions:
    def test_get_resource(self, ctx):
        assert resolve({"get_resource": "server"}, ctx) == "server-id"
        assert "expects a resource name" in _fails({"get_resource": ["server"]}, ctx).reason

    def test_get_attr_nested_path(self, ctx):
        snippet = {"get_attr": ["server", "networks", "private", 1, "addr"]}
        assert resolve(snippet, ctx) == "10.0.0.6"
        assert resolve({"get_attr": ["server", "networks", "public"]}, ctx) is None
        assert resolve({"get_attr": ["server", "name"]}, ctx) == "web-1"

    def test_get_attr_bad_arguments(self, ctx):
        err = _fails({"get_attr": ["server"]}, ResolveContext(version="2015-04-30"))
        assert err.path == "resources.r.properties.p.get_attr"
        assert "expects [resource, attribute" in err.reason
        assert "must be strings" in _fails({"get_attr": ["server", 1]}, ctx).reason
        assert "strings or integers" in _fails({"get_attr": ["server", "a", None]}, ctx).reason

    def test_missing_callables(self):
        empty = ResolveContext()
        assert "not available" in _fails({"get_resource": "a"}, empty).reason
        assert "not available" in _fails({"get_attr": ["a", "b"]}, empty).reason

    def test_unresolved_propagates_through_functions(self, ctx):
        ctx.get_attr = lambda name, attr, path: UNRESOLVED
        snippet = {"list_join": [",", ["a", {"get_attr": ["x", "y"]}]]}
        assert resolve(snippet, ctx) is UNRESOLVED
        assert resolve({"k": [{"get_attr": ["x", "y"]}]}, ctx) == {"k": [UNRESOLVED]}


class TestGetFile:
    def test_reads_files(self, ctx):
        assert resolve({"get_file": "init.sh"}, ctx).startswith("#!/bin/sh")

    def test_missing_file_is_named(self, ctx):
        err = _fails({"get_file": "setup.sh"}, ctx)
        assert err.path == "resources.r.properties.p.get_file"
        assert err.reason == "no content in the files map for 'setup.sh'"


class TestStrings:
    def test_list_join(self, ctx):
        assert resolve({"list_join": [", ", ["a", "b"], ["c"]]}, ctx) == "a, b, c"
        assert resolve({"list_join": ["-", {"get_param": "zones"}]}, ctx) == "az1-az2"
        assert resolve({"list_join": [",", ["1", None, {"a": 1}]]}, ctx) == '1,,{"a": 1}'
        # Heat's JoinMultiple refuses numbers.
        assert "must be strings, maps or lists" in _fails({"list_join": [",", [1]]}, ctx).reason

    def test_list_join_errors(self, ctx):
        assert "argument 1 must be a list" in _fails({"list_join": [",", "ab"]}, ctx).reason
        assert "delimiter must be a string" in _fails({"list_join": [1, []]}, ctx).reason
        assert _fails({"list_join": []}, ctx).path == "resources.r.properties.p.list_join"

    def test_fn_join(self, ctx):
        old = ResolveContext(version="2013-05-23")
        assert resolve({"Fn::Join": ["/", ["a", "b", "3"]]}, old) == "a/b/3"
        assert "expects [delimiter, list]" in _fails({"Fn::Join": ["/"]}, old).reason
        assert "not supported in heat_template_version 2021-04-16" in _fails(
            {"Fn::Join": ["/", []]}, ctx).reason

    def test_str_replace(self, ctx):
        snippet = {
            "str_replace": {
                "template": "http://$host:$port/$path",
                "params": {
                    "$host": {"get_param": ["config", "servers", 0, "host"]},
                    "$port": {"get_param": ["config", "port"]},
                    "$path": ["x", 1],
                },
            }
        }
        assert resolve(snippet, ctx) == 'http://a:80/["x", 1]'

    def test_str_replace_longest_key_first_and_no_rescan(self, ctx):
        snippet = {
            "str_replace": {
                "template": "$var $var_long",
                "params": {"$var": "$var_long", "$var_long": "L"},
            }
        }
        assert resolve(snippet, ctx) == "$var_long L"

    def test_str_replace_map_value_and_none(self, ctx):
        snippet = {"str_replace": {"template": "a=A n=N", "params": {"A": {"k": 1}, "N": None}}}
        assert resolve(snippet, ctx) == 'a={"k": 1} n='

    @pytest.mark.parametrize(
        "args, fragment",
        [
            ({"template": "x"}, "syntax is"),
            ({"template": 1, "params": {}}, "template must be a string"),
            ({"template": "x", "params": []}, "params must be a map"),
            ({"template": "x", "params": {"": "y"}}, "must not be empty"),
        ],
    )
    def test_str_replace_errors(self, ctx, args, fragment):
        err = _fails({"str_replace": args}, ctx)
        assert err.path == "resources.r.properties.p.str_replace"
        assert fragment in err.reason

    def test_str_replace_strict(self, ctx):
        ok = {"str_replace_strict": {"template": "a-B", "params": {"B": "b"}}}
        assert resolve(ok, ctx) == "a-b"
        err = _fails({"str_replace_strict": {"template": "a", "params": {"Z": 1, "a": 2}}}, ctx)
        assert err.reason == "params not found in the template: Z"

    def test_str_split(self, ctx):
        assert resolve({"str_split": [",", "a,b,c"]}, ctx) == ["a", "b", "c"]
        assert resolve({"str_split": [",", "a,b,c", 1]}, ctx) == "b"
        assert resolve({"str_split": [",", "a,b,c", "2"]}, ctx) == "c"

    @pytest.mark.parametrize(
        "args, fragment",
        [
            ([","], "<index>"),
            (["", "a"], "non-empty string"),
            ([",", ["a"]], "can only split a string"),
            ([",", "a,b", 5], "index 5 is not between 0 and 1"),
        ],
    )
    def test_str_split_errors(self, ctx, args, fragment):
        assert fragment in _fails({"str_split": args}, ctx).reason


class TestCollections:
    def test_list_concat(self, ctx):
        snippet = {"list_concat": [{"get_param": "zones"}, ["az1", "az3"]]}
        assert resolve(snippet, ctx) == ["az1", "az2", "az1", "az3"]
        assert resolve({"list_concat_unique": [[{"a": 1}, 2], [{"a": 1}, 3]]}, ctx) == [
            {"a": 1},
            2,
            3,
        ]
        assert "items to concat must be lists" in _fails({"list_concat": [[], "x"]}, ctx).reason
        assert "list of lists" in _fails({"list_concat_unique": "x"}, ctx).reason

    def test_map_merge(self, ctx):
        assert resolve({"map_merge": [{"a": 1, "b": 1}, {"b": 2}]}, ctx) == {"a": 1, "b": 2}
        assert "items to merge must be maps" in _fails({"map_merge": [[1]]}, ctx).reason
        assert "list of maps" in _fails({"map_merge": {"a": 1}}, ctx).reason

    def test_map_replace(self, ctx):
        snippet = {
            "map_replace": [
                {"k1": "v1", "k2": "v2", "k3": [1]},
                {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
            ]
        }
        assert resolve(snippet, ctx) == {"K1": "v1", "k2": "V2", "k3": [1]}

    @pytest.mark.parametrize(
        "args, fragment",
        [
            ({"a": 1}, "expects [{"),
            ([[], {}], "arguments must be maps"),
            ([{}, {"other": {}}], "takes only keys and values"),
            ([{}, {"keys": []}], "must be maps"),
            ([{"a": 1, "b": 2}, {"keys": {"a": "b"}}], "collides"),
        ],
    )
    def test_map_replace_errors(self, ctx, args, fragment):
        assert fragment in _fails({"map_replace": args}, ctx).reason


class TestRepeat:
    def test_single_loop_with_nested_functions(self, ctx):
        snippet = {
            "repeat": {
                "for_each": {"%zone%": {"get_param": "zones"}},
                "template": {
                    "name": {"list_join": ["-", [{"get_param": "name"}, "%zone%"]]},
                    "zone": "%zone%",
                },
            }
        }
        assert resolve(snippet, ctx) == [
            {"name": "web-az1", "zone": "az1"},
            {"name": "web-az2", "zone": "az2"},
        ]

    def test_permutations(self, ctx):
        snippet = {"repeat": {"for_each": {"<a>": [1, 2], "<b>": ["x", "y"]}, "template": "<a><b>"}}
        assert resolve(snippet, ctx) == ["1x", "1y", "2x", "2y"]
        snippet["repeat"]["permutations"] = False
        assert resolve(snippet, ctx) == ["1x", "2y"]

    def test_whole_string_placeholder_keeps_type(self, ctx):
        snippet = {"repeat": {"for_each": {"%p%": [80, 443]}, "template": {"port": "%p%"}}}
        assert resolve(snippet, ctx) == [{"port": 80}, {"port": 443}]

    @pytest.mark.parametrize(
        "args, fragment",
        [
            ({"template": "x"}, "syntax is"),
            ({"for_each": {}, "template": "x"}, "must contain a map"),
            ({"for_each": {"%a%": "x"}, "template": "x"}, "must be lists or maps"),
            ({"for_each": {"%a%": [1]}, "template": "x", "permutations": "no"}, "boolean"),
            (
                {"for_each": {"%a%": [1], "%b%": [1, 2]}, "template": "x", "permutations": False},
                "same length",
            ),
        ],
    )
    def test_errors(self, ctx, args, fragment):
        err = _fails({"repeat": args}, ctx)
        assert err.path == "resources.r.properties.p.repeat"
        assert fragment in err.reason

    def test_unresolved_for_each(self, ctx):
        ctx.get_attr = lambda *args: UNRESOLVED
        snippet = {"repeat": {"for_each": {"%a%": {"get_attr": ["a", "b"]}}, "template": "x"}}
        assert resolve(snippet, ctx) is UNRESOLVED


def test_error_paths_point_into_nested_arguments(ctx):
    snippet = {"list": [1, {"list_join": [",", [{"get_param": "missing"}]]}]}
    err = _fails(snippet, ctx, "outputs.o.value")
    assert err.path == "outputs.o.value.list[1].list_join[1][0].get_param"


def test_mapping_with_function_name_and_other_keys_is_data(ctx):
    snippet = {"get_param": "name", "other": 1}
    assert resolve(snippet, ctx) == snippet


class TestReferences:
    SNIPPET = {
        "a": {"get_resource": "net"},
        "b": [{"list_join": [",", [{"get_attr": ["server", "networks", "private"]}]]}],
        "c": {"get_attr": ["db", {"get_param": "name"}]},
        "d": {"get_resource": {"get_param": "name"}},
        "e": {"str_replace": {"template": "x", "params": {"x": {"get_attr": ["lb", "ip"]}}}},
    }

    def test_references(self):
        assert references(self.SNIPPET) == {"net", "server", "db", "lb"}

    def test_attribute_references(self):
        # A computed attribute (db) or resource name is None: any may be read.
        assert attribute_references(self.SNIPPET) == {
            ("server", "networks"), ("lb", "ip"), ("db", None)}
        computed = {"get_attr": [{"get_param": "which"}, "ip"]}
        assert attribute_references(computed) == {(None, "ip")}

    def test_computes_references(self):
        assert computes_references(self.SNIPPET["d"])
        assert computes_references({"get_attr": [{"get_param": "which"}, "ip"]})
        assert not computes_references({k: self.SNIPPET[k] for k in "abce"})

    def test_find_references_paths_in_document_order(self):
        found = find_references(self.SNIPPET, "resources.r.properties")
        assert [(r.kind, r.resource, r.attribute, r.path) for r in found] == [
            ("get_resource", "net", None, "resources.r.properties.a"),
            ("get_attr", "server", "networks", "resources.r.properties.b[0].list_join[1][0]"),
            ("get_attr", "db", None, "resources.r.properties.c"),
            ("get_attr", "lb", "ip", "resources.r.properties.e.str_replace.params.x"),
        ]

    def test_deeply_nested_snippet(self):
        deep = {"get_resource": "a"}
        for _ in range(3000):
            deep = {"k": [deep]}
        assert references(deep) == {"a"}


def test_select_path():
    value = {"a": [{"b": 1}]}
    assert select_path(value, ["a", 0, "b"]) == 1
    assert select_path(value, ["a", "0", "b"]) == 1
    assert select_path(value, ["a", 3]) is None
    assert select_path(value, ["a", "x"], missing="") == ""
    assert select_path("text", ["x"]) is None


def test_a_resolve_leaves_no_cyclic_garbage():
    """A traversal makes a context and resolves with it for every resource:
    neither the context and its conditions nor the walk may make a
    reference cycle, or each one waits for a full collection to be freed
    (tens of thousands of objects per 1,000-resource traversal)."""
    import gc

    from nestedflow.template.template import Template

    tmpl = Template({
        "heat_template_version": "2021-04-16",
        "parameters": {"env": {"type": "string", "default": "prod"}},
        "conditions": {"is_prod": {"equals": [{"get_param": "env"}, "prod"]}},
        "resources": {},
    })
    snippet = {"name": {"if": ["is_prod", {"list_join": ["-", ["a", {"get_param": "env"}]]},
                               "dev"]},
               "deep": [{"a": [{"get_resource": "other"}]}]}
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        ctx = tmpl.context({"env": "prod"}, get_resource=lambda name: f"id-{name}")
        value = resolve(snippet, ctx, "resources.r.properties")
        assert value == {"name": "a-prod", "deep": [{"a": ["id-other"]}]}
        del ctx
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
