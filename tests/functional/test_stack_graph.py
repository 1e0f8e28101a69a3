"""The deployment at a glance: ``nestedflow stack graph`` (terminal and DOT,
the DOT rendered by graphviz's ``dot``), ``stack checks``, ``stack rerun``,
``stack stop`` and ``stack continue`` through the real command line."""

import io
import json
import shutil
import subprocess

import pytest
import yaml

from nestedflow.cmd import shell
from nestedflow.engine import graph
from nestedflow.resources import nested, test_resource
from nestedflow.resources.registry import ResourceRegistry

DOT = shutil.which("dot")


class FailsItsPostCheck(test_resource.TestResource):
    def post_check(self, action):
        raise RuntimeError("port 8080 is closed")


def run(db_url, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = shell.main(["--db-url", db_url, *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def render(dot_text):
    """SVG of ``dot_text`` as the Debian graphviz package draws it."""
    assert DOT, "graphviz is not installed (apt-get install graphviz; .ci/run does)"
    done = subprocess.run([DOT, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def test_dot_of_a_nested_stack_with_a_failed_check_renders(make_engine, sqlite_url,
                                                            stack_name):
    registry = ResourceRegistry.for_testing({
        "OS::Heat::TestResource": test_resource.TestResource,
        "OS::Heat::Stack": nested.StackResource,
        "My::Web": FailsItsPostCheck})
    engine = make_engine(sqlite_url, registry=registry)
    child = {"heat_template_version": "2016-10-14", "resources": {
        "db": {"type": "OS::Heat::TestResource"},
        "web": {"type": "My::Web", "depends_on": "db"}}}
    parent = {"heat_template_version": "2016-10-14", "resources": {
        "network": {"type": "OS::Heat::TestResource"},
        "app": {"type": "OS::Heat::Stack", "depends_on": "network",
                "properties": {"template": yaml.safe_dump(child)}},
        "after": {"type": "OS::Heat::TestResource", "depends_on": "app"}}}
    stack = engine.wait(engine.create_stack(stack_name, parent, disable_rollback=True).id,
                        timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    found = graph.build(engine, stack.id)
    app = {n.name: n for n in found.nodes}["app"]
    assert app.child is not None and {n.name for n in app.child.nodes} == {"db", "web"}
    dot = graph.to_dot(found)
    assert "subgraph cluster_" in dot and "lhead=cluster_" in dot
    svg = render(dot)
    assert "<svg" in svg
    for text in ("network", "app", "web", "db", "after", "CREATE_FAILED",
                 "FAIL post&#45;check plugin"):
        assert text in svg, text
    assert 'fill="salmon"' in svg and 'fill="palegreen"' in svg and 'fill="lightgrey"' in svg
    lines = graph.to_text(found)
    assert all(len(line) <= 80 for line in lines), lines
    assert any("post-check 'plugin' FAIL: port 8080 is closed" in line for line in lines)


def ten_resources():
    resources = {"network": {"type": "OS::Heat::TestResource"}}
    for i in range(6):
        resources[f"server_with_a_long_name_{i}"] = {
            "type": "OS::Heat::TestResource", "depends_on": "network"}
    resources["load_balancer"] = {"type": "OS::Heat::TestResource",
                                  "depends_on": [f"server_with_a_long_name_{i}"
                                                 for i in range(6)]}
    resources["dns"] = {"type": "OS::Heat::RandomString", "depends_on": "load_balancer"}
    resources["monitoring"] = {"type": "OS::Heat::None", "depends_on": ["dns", "network"]}
    return {"heat_template_version": "2016-10-14", "resources": resources}


def test_cli_graph_of_ten_resources_fits_80_columns(sqlite_url, tmp_path, stack_name):
    template = tmp_path / "ten.yaml"
    template.write_text(yaml.safe_dump(ten_resources()))
    env = tmp_path / "checks.yaml"
    env.write_text(yaml.safe_dump({"checks": {"server_*": [
        {"type": "attribute", "attribute": "output", "equals": "test_string"}]}}))
    code, out, err = run(sqlite_url, "stack", "create", stack_name, "-t", str(template),
                         "-e", str(env), "--wait", "-f", "json")
    assert code == 0, err
    code, out, err = run(sqlite_url, "stack", "graph", stack_name)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 11  # the stack, then one line per resource
    assert all(len(line) <= 80 for line in lines), "\n" + out
    assert lines[0] == f"{stack_name}  CREATE_COMPLETE"
    assert lines[1].startswith("[+] network ")  # what everything needs comes first
    assert "checks 1/1" in out and "<- network" in out
    code, out, err = run(sqlite_url, "stack", "graph", stack_name, "-f", "dot")
    assert code == 0, err
    assert "<svg" in render(out)

    code, out, err = run(sqlite_url, "stack", "checks", stack_name, "-f", "json")
    assert code == 0, err
    results = json.loads(out)
    assert len(results) == 6 and {r["status"] for r in results} == {"PASS"}
    code, out, err = run(sqlite_url, "stack", "checks", stack_name, "--max-width", "80")
    assert code == 0 and "server_with_a_long_name_0" in out, err
    assert all(len(line) <= 80 for line in out.splitlines()), "\n" + out


def test_cli_rerun_stop_and_continue(sqlite_url, tmp_path, stack_name):
    template = tmp_path / "ten.yaml"
    template.write_text(yaml.safe_dump(ten_resources()))
    code, out, err = run(sqlite_url, "stack", "create", stack_name, "-t", str(template),
                         "--wait", "-f", "json")
    assert code == 0, err
    code, out, err = run(sqlite_url, "stack", "rerun", stack_name, "-r", "load_balancer",
                         "--with-dependents", "-f", "json")
    assert code == 0, err
    assert json.loads(out)["stack_status"] == "UPDATE_COMPLETE"
    code, out, err = run(sqlite_url, "stack", "rerun", stack_name, "-r", "network",
                         "--checks-only", "-f", "json")
    assert code == 0, err
    assert json.loads(out)["stack_status"] == "CHECK_COMPLETE"
    code, out, err = run(sqlite_url, "stack", "rerun", stack_name, "-r", "nope")
    assert code == 1 and "Resource nope not found" in err
    # Nothing to stop or continue in a settled, complete stack: one clear line.
    code, out, err = run(sqlite_url, "stack", "continue", stack_name)
    assert code == 1 and "only a stopped (or failed) create or update" in err
    code, out, err = run(sqlite_url, "stack", "stop", stack_name)
    assert code == 1 and "only a create or update in progress" in err


@pytest.mark.parametrize("width", [40, 80, 120])
def test_text_view_respects_the_width(width):
    node = graph.Node(name="x" * 60, type="T", action="CREATE", status="FAILED",
                      physical_id=None, requires=["y" * 50],
                      checks=[("post", "c", "FAIL", "m" * 200)])
    lines = graph.to_text(graph.Graph(id="s", name="s", state="CREATE_FAILED",
                                      status_reason="r" * 300, nodes=[node]), width)
    assert all(len(line) <= width for line in lines)


def test_progress_view_names_failed_checks(sqlite_engine, stack_name):
    """The line under the progress bar (nestedflow.cmd.progress) while waiting."""
    from nestedflow.cmd import progress

    engine = sqlite_engine
    template = ten_resources()
    environment = {"checks": {"server_with_a_long_name_[01]": [
        {"type": "attribute", "attribute": "output", "equals": "x", "name": "output is x"}],
        "network": [{"type": "attribute", "attribute": "output", "matches": "test_.*"}]}}
    stack = engine.wait(engine.create_stack(stack_name, template, environment=environment,
                                            disable_rollback=True).id, timeout=60)
    assert stack.stack_status == "CREATE_FAILED"
    line = progress.checks_line(engine.list_checks(stack.id, latest=True))
    assert line.startswith("checks: 1 passed, 2 failed: server_with_a_long_name_")
    assert "'output is x'" in line
    assert progress.checks_line([]) == ""
