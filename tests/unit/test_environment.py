"""Environments as Heat's (heat/common/environment_format.py,
heat/common/environment_util.py, heat/engine/environment.py and their tests
heat/tests/test_environment.py, heat/tests/test_environment_format.py)."""

import pytest

from nestedflow.exceptions import StackValidationFailed
from nestedflow.template import environment as env
from nestedflow.template.template import Template


def _fails(fn, *args, **kwargs):
    with pytest.raises(StackValidationFailed) as info:
        fn(*args, **kwargs)
    return info.value


class TestParse:
    def test_sections(self):
        text = ("parameters: {a: 1}\nparameter_defaults: {b: 2}\n"
                "resource_registry: {'OS::X': OS::Heat::None}\nencrypted_param_names: []\n"
                "event_sinks: []\nparameter_merge_strategies: {a: merge}\n")
        assert env.parse(text)["parameter_defaults"] == {"b": 2}

    def test_wrong_section_names_it(self):
        """test_environment_format.YamlEnvironmentTest.test_wrong_sections."""
        err = _fails(env.parse, "parameterz: {}\n")
        assert err.path == "environment.parameterz"
        assert "environment has wrong section 'parameterz'" in str(err)

    def test_empty_section(self):
        """test_environment_format: a section present but null is refused."""
        err = _fails(env.parse, "parameters:\n")
        assert "has empty section 'parameters'" in str(err)

    def test_event_sinks_refused_clearly(self):
        err = _fails(env.parse, {"event_sinks": [{"type": "zaqar-queue", "target": "q"}]})
        assert err.path == "environment.event_sinks"
        assert "event sinks are not supported" in str(err)

    def test_invalid_hook_refused_clearly(self):
        """heat/engine/environment.py is_hook_definition: only Heat's hook types."""
        err = _fails(env.parse, {"resource_registry": {"resources": {"web": {
            "hooks": "pre-lunch"}}}})
        assert err.path == "environment.resource_registry.resources.web.hooks"
        assert 'Invalid hook type "pre-lunch"' in str(err)

    def test_hooks_match_as_heats(self):
        """heat/tests/test_environment.py HooksTest: exact names, wildcards,
        a string or a list of hooks, nested entries narrowed to the child."""
        parsed = env.parse({"resource_registry": {"resources": {
            "web": {"hooks": "pre-create"}, "db_*": {"hooks": ["pre-update", "pre-delete"]},
            "group": {"member": {"hooks": "pre-create"}}}}})
        registry = parsed["resource_registry"]
        assert env.matches_hook(registry, "web", "pre-create")
        assert not env.matches_hook(registry, "web", "pre-update")
        assert env.matches_hook(registry, "db_main", "pre-delete")
        assert not env.matches_hook(registry, "member", "pre-create")
        child = env.child_environment(parsed, "group")["resource_registry"]
        assert env.matches_hook(child, "member", "pre-create")

    def test_unknown_merge_strategy(self):
        err = _fails(env.parse, {"parameter_merge_strategies": {"a": "sum"}})
        assert "unknown merge strategy 'sum'" in str(err)

    def test_syntax_error_names_line(self):
        err = _fails(env.parse, "parameters:\n  a: [1\n", name="env.yaml")
        assert str(err).startswith("env.yaml: line 3")


class TestResolveType:
    REGISTRY = {
        "OS::Nova::*": "OS::Heat::None",
        "My::Server": "server.yaml",
        "My::Alias": "My::Server",
        "Old::*": "New::*",
        "New::Thing": "OS::Heat::TestResource",
        "resources": {"special": {"OS::Nova::Server": "OS::Heat::TestResource"}},
    }

    @pytest.mark.parametrize("type_name, resource, expected", [
        ("OS::Nova::Server", None, "OS::Heat::None"),  # many-to-one wildcard
        ("OS::Nova::Server", "special", "OS::Heat::TestResource"),  # per resource wins
        ("OS::Nova::Server", "other", "OS::Heat::None"),
        ("My::Alias", None, "server.yaml"),  # alias chain ending in a file
        ("Old::Thing", None, "OS::Heat::TestResource"),  # prefix rewrite, then alias
        ("OS::Heat::None", None, "OS::Heat::None"),  # not matched by its own wildcard
        ("OS::Neutron::Net", None, "OS::Neutron::Net"),
    ])
    def test_resolution(self, type_name, resource, expected):
        """test_environment.GlobalEnvLoadingTest / ResourceRegistryTest cases."""
        assert env.resolve_type(self.REGISTRY, type_name, resource) == expected

    def test_catch_all_wildcard_matches_built_ins_too(self):
        """Heat's GlobResourceInfo: ``OS::*`` matches every OS:: type but its target."""
        registry = {"OS::*": "OS::Heat::None"}
        assert env.resolve_type(registry, "OS::Heat::RandomString") == "OS::Heat::None"

    def test_loop(self):
        err = _fails(env.resolve_type, {"A": "B", "B": "A"}, "A")
        assert "aliases loop: A -> B -> A" in str(err)

    def test_template_maps_types(self):
        tmpl = Template(
            {"heat_template_version": "2021-04-16",
             "resources": {"a": {"type": "OS::Nova::Server"},
                           "special": {"type": "OS::Nova::Server"}}},
            environment={"resource_registry": self.REGISTRY})
        assert tmpl.resources["a"].type == "OS::Heat::None"
        assert tmpl.resources["special"].type == "OS::Heat::TestResource"


class TestMerge:
    TYPES = {"s": "string", "n": "number", "l": "comma_delimited_list", "j": "json"}

    def test_later_environments_overwrite(self):
        merged = env.normalise([
            {"parameters": {"s": "a", "n": 1}, "resource_registry": {"A": "B", "C": "D"}},
            {"parameters": {"s": "b"}, "resource_registry": {"A": "E"}},
        ], self.TYPES)
        assert merged["parameters"] == {"s": "b", "n": 1}
        assert merged["resource_registry"] == {"A": "E", "C": "D"}

    # heat/tests/test_common_env_util.py TestMergeEnvironments, same data.
    HEAT_TYPES = {"str_value1": "string", "str_value2": "string",
                  "del_lst_value1": "comma_delimited_list",
                  "del_lst_value2": "comma_delimited_list",
                  "lst_value1": "comma_delimited_list", "lst_value2": "comma_delimited_list",
                  "json_value1": "json", "json_value2": "json"}

    def _heat_envs(self):
        env_1 = {"parameters": {
            "str_value1": "string1", "str_value2": "string2", "del_lst_value1": "1,2",
            "del_lst_value2": "3,4", "lst_value1": [1, 2],
            "json_value1": {"1": ["str1", "str2"]}, "json_value2": {"2": ["test1", "test2"]}},
            "resource_registry": {"test::R1": "OS::Heat::RandomString", "test::R2": "BROKEN"},
            "parameter_defaults": {"lst_value2": [3, 4]}}
        env_2 = {"parameters": {
            "str_value1": "string3", "str_value2": "string4", "del_lst_value1": "5,6",
            "del_lst_value2": "7,8", "lst_value1": [5, 6],
            "json_value1": {"3": ["str3", "str4"]}, "json_value2": {"4": ["test3", "test4"]}},
            "resource_registry": {"test::R2": "OS::Heat::None"},
            "parameter_defaults": {"lst_value2": [7, 8]}}
        return env_1, env_2

    def test_heat_default_merge_strategy(self):
        """test_merge_envs_with_param_default_merge_strategy."""
        merged = env.normalise(list(self._heat_envs()), self.HEAT_TYPES)
        assert merged == {
            "parameters": {"json_value1": {"3": ["str3", "str4"]},
                           "json_value2": {"4": ["test3", "test4"]},
                           "del_lst_value1": "5,6", "del_lst_value2": "7,8",
                           "lst_value1": [5, 6], "str_value1": "string3",
                           "str_value2": "string4"},
            "resource_registry": {"test::R1": "OS::Heat::RandomString",
                                  "test::R2": "OS::Heat::None"},
            "parameter_defaults": {"lst_value2": [7, 8]}}

    def test_heat_specified_default(self):
        """test_merge_envs_with_specified_default (deep_merge for everything)."""
        env_1, env_2 = self._heat_envs()
        env_1["parameter_merge_strategies"] = {"default": "deep_merge"}
        merged = env.normalise([env_1, env_2], self.HEAT_TYPES)
        assert merged["parameters"] == {
            "json_value1": {"3": ["str3", "str4"], "1": ["str1", "str2"]},
            "json_value2": {"4": ["test3", "test4"], "2": ["test1", "test2"]},
            "del_lst_value1": "1,2,5,6", "del_lst_value2": "3,4,7,8",
            "lst_value1": [1, 2, 5, 6], "str_value1": "string1string3",
            "str_value2": "string2string4"}
        assert merged["parameter_defaults"] == {"lst_value2": [3, 4, 7, 8]}

    def test_heat_param_specific_strategy(self):
        """test_merge_envs_with_param_specific_merge_strategy."""
        env_1, env_2 = self._heat_envs()
        env_1["parameter_merge_strategies"] = {
            "default": "overwrite", "lst_value1": "merge", "lst_value2": "merge",
            "json_value1": "deep_merge"}
        merged = env.normalise([env_1, env_2], self.HEAT_TYPES)
        assert merged["parameters"] == {
            "json_value1": {"3": ["str3", "str4"], "1": ["str1", "str2"]},
            "json_value2": {"4": ["test3", "test4"]},
            "del_lst_value1": "5,6", "del_lst_value2": "7,8",
            "lst_value1": [1, 2, 5, 6], "str_value1": "string3", "str_value2": "string4"}
        assert merged["parameter_defaults"] == {"lst_value2": [3, 4, 7, 8]}

    def test_numbers_add(self):
        merged = env.normalise([
            {"parameter_merge_strategies": {"n": "merge"}, "parameters": {"n": 1}},
            {"parameters": {"n": 2}}], self.TYPES)
        assert merged["parameters"] == {"n": 3}

    def test_conflicting_strategies(self):
        """test_merge_envs_with_param_conflicting_merge_strategy: a file naming
        another strategy for a parameter an earlier file fixed is refused."""
        err = _fails(env.normalise, [
            {"parameters": {"s": "a"}},
            {"parameter_merge_strategies": {"s": "merge"}, "parameters": {"s": "b"}},
        ], self.TYPES)
        assert err.path == "environment[1].parameters.s"
        assert "conflicting merge strategy 'merge' for parameter 's'" in str(err)

    def test_null_removes_registry_entries(self):
        """ResourceRegistry._register_info: ``X: null`` deletes, ``P*: null`` every P..."""
        merged = env.update(
            env.normalise({"resource_registry": {"A::x": "B", "A::y": "C", "D": "E"}}),
            {"resource_registry": {"A::*": None}})
        assert merged["resource_registry"] == {"D": "E"}

    def test_template_merges_a_list_of_environments(self):
        tmpl = Template({"heat_template_version": "2021-04-16",
                         "parameters": {"s": {"type": "string"}}},
                        environment=["parameter_merge_strategies: {s: merge}\n"
                                     "parameters: {s: a}\n",
                                     {"parameters": {"s": "b"}}])
        assert tmpl.environment["parameters"] == {"s": "ab"}


class TestChildEnvironment:
    def test_inherits_registry_and_defaults_not_parameters(self):
        """get_child_environment: parameters are the child's own."""
        parent = env.normalise({
            "parameters": {"p": 1}, "parameter_defaults": {"d": 2},
            "resource_registry": {"OS::Nova::*": "OS::Heat::None", "resources": {
                "web*": {"OS::X": "a.yaml"}, "web1": {"OS::Y": "b.yaml"},
                "db": {"OS::Z": "c.yaml"}}}})
        child = env.child_environment(parent, "web1")
        assert child["parameters"] == {}
        assert child["parameter_defaults"] == {"d": 2}
        assert child["resource_registry"] == {
            "OS::Nova::*": "OS::Heat::None",
            "resources": {"OS::X": "a.yaml", "OS::Y": "b.yaml"}}
        assert "resources" not in env.child_environment(parent, "other")["resource_registry"]
