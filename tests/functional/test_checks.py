"""Pre- and post-checks of resource actions (nestedflow.checks), on real
databases, against real local servers (an HTTP server and TCP ports owned
by the test)."""

import socket

import pytest

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.resources import test_resource
from nestedflow.resources.registry import ResourceRegistry

TEMPLATE = """
heat_template_version: 2016-10-14
resources:
  db: {type: OS::Heat::TestResource, properties: {value: db-ok}}
  web:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [db, output]}}
  worker: {type: OS::Heat::TestResource, depends_on: web}
"""


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def checks_of(engine, stack_id):
    return [(c.resource_name, c.action, c.phase, c.check, c.status)
            for c in engine.list_checks(stack_id)]


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_environment_checks_fail_the_stack_naming_resource_and_check(
        engine, stack_name, server):
    """The template is unchanged; the environment file adds the checks."""
    server.statuses["/health"] = [500]
    environment = f"""
checks:
  web:
    - name: web answers
      type: http
      url: {server.url('/health')}
      status: 200
      timeout: 5
      retries: 1
      delay: 0
  "*":
    - name: value set
      type: attribute
      attribute: output
      matches: ".+"
"""
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE,
                                            environment=environment).id, timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert "resources.web" in stack.status_reason
    assert "post-check 'web answers' of CREATE failed" in stack.status_reason
    assert "answered 500, expected 200" in stack.status_reason
    assert engine.store.live(stack.id) == []  # rolled back
    assert server.hits == ["/health", "/health"]  # the retry ran
    results = engine.list_checks(stack.id)
    assert sorted(checks_of(engine, stack.id)) == [
        ("db", "CREATE", "post", "value set", "PASS"),
        ("web", "CREATE", "post", "value set", "PASS"),
        ("web", "CREATE", "post", "web answers", "FAIL"),
    ]
    failed = [r for r in results if r.status == "FAIL"][0]
    assert failed.attempts == 2 and failed.duration >= 0 and failed.type == "http"
    # Shown in the events, next to the resource's own.
    reasons = [e.status_reason for e in engine.list_events(stack.id) if e.resource_name == "web"]
    assert any("post-check 'web answers' FAIL" in r for r in reasons)


def test_failed_pre_check_leaves_no_physical_object(sqlite_engine, stack_name):
    port = closed_port()
    environment = {"checks": {"web": [{"type": "tcp", "port": port, "phase": "pre",
                                       "timeout": 2}]}}
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE, environment=environment,
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.web: pre-check 'tcp' of CREATE failed" in stack.status_reason
    # db was created before; web never touched anything; worker never ran.
    assert [o.resource_name for o in engine.store.live(stack.id)] == ["db"]
    web = {r.name: r for r in engine.list_resources(stack.id)}["web"]
    assert (web.action, web.status, web.physical_id) == ("CREATE", "FAILED", None)
    assert checks_of(engine, stack.id) == [("web", "CREATE", "pre", "tcp", "FAIL")]


def test_passing_checks_of_every_type(sqlite_engine, stack_name, server):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        CONF.set_override("commands", {"ready": "sh -c 'echo ready for $$NESTEDFLOW_RESOURCE'"},
                          group="checks")
        try:
            environment = {"checks": {"w*": [
                {"type": "tcp", "port": listener.getsockname()[1], "phase": "pre"},
                {"type": "http", "url": server.url("/ok"), "matches": "hello"},
                {"type": "attribute", "attribute": "output", "equals": "db-ok"},
                {"type": "command", "command": "ready"},
            ]}}
            stack = sqlite_engine.wait(sqlite_engine.create_stack(
                stack_name, TEMPLATE, environment=environment).id, timeout=60)
        finally:
            CONF.clear_override("commands", group="checks")
    assert stack.stack_status == "CREATE_FAILED" or stack.stack_status == "ROLLBACK_COMPLETE"
    results = sqlite_engine.list_checks(stack.id)
    by = {(r.resource_name, r.check): r for r in results}
    assert by[("web", "tcp")].status == "PASS"
    assert by[("web", "http")].status == "PASS"
    assert by[("web", "attribute")].status == "PASS"
    assert by[("web", "command")].message == "command 'ready' exited 0: ready for web"
    # worker's output is the default value: its attribute check fails.
    assert by[("worker", "attribute")].status == "FAIL"
    assert "attribute output is 'test_string', expected 'db-ok'" in by[
        ("worker", "attribute")].message


def test_command_outside_the_allow_list_never_runs(sqlite_engine, stack_name):
    environment = {"checks": {"db": [{"type": "command", "command": "rm-everything"}]}}
    stack = sqlite_engine.wait(sqlite_engine.create_stack(
        stack_name, TEMPLATE, environment=environment).id, timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert "'rm-everything' is not in this engine's allow-list" in stack.status_reason


class Checked(test_resource.TestResource):
    """A plugin with its own checks: the value must not be 'bad' before a
    create; the object must exist after it."""

    calls = []

    def pre_check(self, action):
        Checked.calls.append(("pre", action, self.physical_id))
        if self.properties.get("value") == "bad":
            raise ValueError("value 'bad' is not allowed here")

    def post_check(self, action):
        Checked.calls.append(("post", action, self.physical_id))
        self._require_object()
        return "object exists"


def test_plugin_defined_checks_run(make_engine, sqlite_url, stack_name):
    registry = ResourceRegistry.for_testing({"My::Checked": Checked,
                                             "OS::Heat::TestResource": test_resource.TestResource})
    engine = make_engine(sqlite_url, registry=registry)
    Checked.calls.clear()
    template = {"heat_template_version": "2016-10-14", "resources": {
        "good": {"type": "My::Checked", "properties": {"value": "fine"}},
        "bad": {"type": "My::Checked", "depends_on": "good", "properties": {"value": "bad"}}}}
    stack = engine.wait(engine.create_stack(stack_name, template,
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.bad: pre-check 'plugin' of CREATE failed: value 'bad'" in \
        stack.status_reason
    good_id = {r.name: r.physical_id for r in engine.list_resources(stack.id)}["good"]
    assert Checked.calls == [("pre", "CREATE", None), ("post", "CREATE", good_id),
                             ("pre", "CREATE", None)]
    assert [(c.resource_name, c.phase, c.check, c.status, c.message)
            for c in engine.list_checks(stack.id)] == [
        ("good", "pre", "plugin", "PASS", "passed"),
        ("good", "post", "plugin", "PASS", "object exists"),
        ("bad", "pre", "plugin", "FAIL", "value 'bad' is not allowed here")]
    assert [o.resource_name for o in engine.store.live(stack.id)] == ["good"]


def test_checks_on_a_stack_check_and_an_update(sqlite_engine, stack_name, server):
    engine = sqlite_engine
    environment = {"checks": {"db": [{"type": "http", "url": server.url("/db"),
                                      "actions": ["CHECK", "UPDATE"]}]}}
    stack = engine.wait(engine.create_stack(stack_name, TEMPLATE,
                                            environment=environment).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE"
    assert engine.list_checks(stack.id) == []  # not a CREATE check
    assert engine.wait(engine.check_stack(stack.id).id, timeout=60).stack_status == \
        "CHECK_COMPLETE"
    server.statuses["/db"] = [503]
    updated = TEMPLATE.replace("value: db-ok", "value: db-2")
    stack = engine.wait(engine.update_stack(stack.id, updated, environment=environment).id,
                        timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert "resources.db: post-check 'http' of UPDATE failed" in stack.status_reason
    assert [o.properties["value"] for o in engine.store.live(stack.id)
            if o.resource_name == "db"] == ["db-ok"]  # the in-place update was undone
    assert engine.wait(engine.check_stack(stack.id).id, timeout=60).stack_status == \
        "CHECK_FAILED"
    assert checks_of(engine, stack.id) == [
        ("db", "CHECK", "post", "http", "PASS"),
        ("db", "UPDATE", "post", "http", "FAIL"),
        ("db", "CHECK", "post", "http", "FAIL")]
    latest = engine.list_checks(stack.id, latest=True)
    assert [(c.action, c.status) for c in latest] == [("UPDATE", "FAIL"), ("CHECK", "FAIL")]


@pytest.mark.parametrize("checks, path", [
    ({"web": [{"type": "nope"}]}, "environment.checks.web[0].type"),
    ({"web": [{"type": "tcp"}]}, "environment.checks.web[0].port"),
    ({"web": [{"type": "http", "url": "ftp://x"}]}, "environment.checks.web[0].url"),
    ({"web": [{"type": "tcp", "port": 80, "phase": "during"}]},
     "environment.checks.web[0].phase"),
    ({"web": [{"type": "tcp", "port": 80, "retries": -1}]},
     "environment.checks.web[0].retries"),
    ({"web": [{"type": "attribute", "attribute": "output"}]}, "environment.checks.web[0]"),
    ({"web": "tcp"}, "environment.checks.web"),
])
def test_bad_check_specs_are_rejected_naming_where(sqlite_engine, stack_name, checks, path):
    with pytest.raises(exceptions.StackValidationFailed) as caught:
        sqlite_engine.create_stack(stack_name, TEMPLATE, environment={"checks": checks})
    assert caught.value.path == path
    assert sqlite_engine.list_stacks() == []


def test_environment_checks_reach_nested_stacks(sqlite_engine, stack_name, server):
    server.statuses["/inner"] = [500]
    child = ("heat_template_version: 2016-10-14\n"
             "resources:\n  web: {type: OS::Heat::TestResource}\n")
    template = {"heat_template_version": "2016-10-14", "resources": {
        "db": {"type": "OS::Heat::TestResource"},
        "app": {"type": "OS::Heat::Stack", "depends_on": "db",
                "properties": {"template": child}}}}
    environment = {"checks": {"web": [{"type": "http", "url": server.url("/inner")}]}}
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(stack_name, template, environment=environment,
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    assert "resources.app" in stack.status_reason and "web" in stack.status_reason
    assert "post-check 'http' of CREATE failed" in stack.status_reason
    results = engine.list_checks(stack.id, nested_depth=1)
    assert [(r.resource_name, r.status) for r in results] == [("web", "FAIL")]
    assert results[0].stack_name != stack_name  # the nested stack's own result


def test_example_environment_files_check_the_unchanged_example(tmp_path, stack_name):
    """examples/checks/ on examples/webapp.yaml, through the command line."""
    import io
    import json
    import pathlib

    from nestedflow.cmd import shell

    root = pathlib.Path(__file__).resolve().parents[2]
    db_url = f"sqlite:///{tmp_path}/cli.sqlite"

    def run(*argv):
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(["--db-url", db_url, *argv], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    template = str(root / "examples" / "webapp.yaml")
    code, out, err = run("stack", "create", stack_name, "-t", template, "-e",
                         str(root / "examples" / "checks" / "webapp-checks.yaml"), "--wait")
    assert code == 0, err
    code, out, err = run("stack", "checks", stack_name, "-f", "json")
    assert sorted((r["resource_name"], r["status"]) for r in json.loads(out)) == [
        ("app", "PASS"), ("db", "PASS"), ("network", "PASS")]
    code, out, err = run("stack", "create", stack_name + "-x", "-t", template, "-e",
                         str(root / "examples" / "checks" / "webapp-unreachable.yaml"),
                         "--enable-rollback", "--wait")
    assert code == 1
    assert "ROLLBACK_COMPLETE" in err and "resources.app: post-check 'app answers'" in err
    code, out, err = run("stack", "checks", stack_name + "-x", "-f", "json")
    (result,) = json.loads(out)
    assert (result["check"], result["status"], result["attempts"]) == ("app answers", "FAIL", 2)
