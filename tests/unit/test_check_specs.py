"""The environment's checks section (nestedflow.checks.spec) and the
built-in check types that need no server."""

import pytest

from nestedflow import exceptions
from nestedflow.checks import base, impl_attribute, spec
from nestedflow.conf import CONF


def target(attributes):
    return base.CheckTarget(stack_id="s", stack_name="s", resource_name="web",
                            action="CREATE", phase="post", physical_id="p",
                            get_attribute=attributes.get)


def test_exact_names_first_then_wildcards_by_phase_and_action():
    parsed = spec.parse({
        "web*": [{"type": "tcp", "port": 1, "name": "wild"}],
        "web": [{"type": "tcp", "port": 2, "name": "exact"},
                {"type": "tcp", "port": 3, "name": "early", "phase": "pre"},
                {"type": "tcp", "port": 4, "name": "on check", "actions": "check"}],
        "db": [{"type": "tcp", "port": 5}],
    })
    assert [s.name for s in spec.for_resource(parsed, "web", "CREATE", "post")] == [
        "exact", "wild"]
    assert [s.name for s in spec.for_resource(parsed, "web", "CREATE", "pre")] == ["early"]
    assert [s.name for s in spec.for_resource(parsed, "web", "CHECK", "post")] == [
        "on check"]
    assert [s.name for s in spec.for_resource(parsed, "webserver", "UPDATE", "post")] == [
        "wild"]
    assert spec.for_resource(parsed, "cache", "CREATE", "post") == []
    assert spec.guards(parsed, "webby") and not spec.guards(parsed, "cache")


def test_unset_timeout_retries_and_delay_come_from_the_options():
    (check,) = spec.parse({"a": [{"type": "tcp", "port": 1}]})["a"]
    CONF.set_override("default_retries", 3, group="checks")
    try:
        assert (check.attempts(), check.attempt_timeout(), check.retry_delay()) == (
            4, CONF.checks.default_timeout, CONF.checks.default_delay)
    finally:
        CONF.clear_override("default_retries", group="checks")
    (given,) = spec.parse({"a": {"type": "tcp", "port": 1, "timeout": 0.5, "retries": 0,
                                 "delay": 0}})["a"]
    assert (given.attempts(), given.attempt_timeout(), given.retry_delay()) == (1, 0.5, 0)


@pytest.mark.parametrize("section, path", [
    ([], "environment.checks"),
    ({"a": [{"port": 1}]}, "environment.checks.a[0].type"),
    ({"a": [{"type": "tcp", "port": 70000}]}, "environment.checks.a[0].port"),
    ({"a": [{"type": "tcp", "port": 1, "bogus": 1}]}, "environment.checks.a[0].bogus"),
    ({"a": [{"type": "tcp", "port": 1, "actions": ["DELETE"]}]},
     "environment.checks.a[0].actions"),
    ({"a": [{"type": "tcp", "port": 1, "timeout": 0}]}, "environment.checks.a[0].timeout"),
    ({"a": [{"type": "tcp", "port": 1, "name": ""}]}, "environment.checks.a[0].name"),
    ({"a": [{"type": "http", "url": "http://x", "status": "ok"}]},
     "environment.checks.a[0].status"),
    ({"a": [{"type": "http", "url": "http://x", "matches": "("}]},
     "environment.checks.a[0].matches"),
    ({"a": [{"type": "command", "command": ["rm", "-rf"]}]},
     "environment.checks.a[0].command"),
])
def test_bad_specs_name_where(section, path):
    with pytest.raises(exceptions.StackValidationFailed) as caught:
        spec.parse(section)
    assert caught.value.path == path


def test_attribute_check_equals_matches_and_path():
    equals = impl_attribute.AttributeCheck({"attribute": "output", "equals": "x"})
    assert equals.run(target({"output": "x"}), 1) == "attribute output is 'x'"
    with pytest.raises(exceptions.CheckError, match="is 'y', expected 'x'"):
        equals.run(target({"output": "y"}), 1)
    deep = impl_attribute.AttributeCheck({"attribute": "info", "path": ["ips", 0],
                                          "matches": r"10\.0\.\d+\.\d+"})
    assert "matches" in deep.run(target({"info": {"ips": ["10.0.0.7"]}}), 1)
    with pytest.raises(exceptions.CheckError, match="does not match"):
        deep.run(target({"info": {"ips": ["192.168.0.1"]}}), 1)
    with pytest.raises(exceptions.CheckError, match="None"):
        deep.run(target({}), 1)
