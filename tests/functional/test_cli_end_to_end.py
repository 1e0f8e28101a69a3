"""The README's walk-through, through the real ``nestedflow`` console script."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import nestedflow
from nestedflow import testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cli(tmp_path):
    env = dict(os.environ, NESTEDFLOW_DB_URL=f"sqlite:///{tmp_path}/cli.sqlite")
    exe = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"

    def run(*args, expect=0):
        proc = subprocess.run([exe, *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        return proc

    run.db_url = env["NESTEDFLOW_DB_URL"]
    return run


def test_readme_example_create_show_delete(cli):
    created = cli("stack", "create", "demo", "-t", "examples/webapp.yaml", "--wait",
                  "-f", "json")
    stack = json.loads(created.stdout)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    resources = json.loads(cli("stack", "resources", "demo", "-f", "json").stdout)
    assert {r["resource_name"] for r in resources} == {"db_password", "network", "db", "cache",
                                                       "app"}
    assert all(r["resource_status"] == "CREATE_COMPLETE" for r in resources)
    outputs = json.loads(cli("stack", "outputs", "demo", "-f", "json").stdout)
    assert outputs["app_url"] == "http://webapp.example.com:8080/"
    table = cli("stack", "resources", "demo").stdout
    assert "db_password" in table and "CREATE" in table
    events = json.loads(cli("stack", "events", "demo", "-f", "json").stdout)
    assert any(e["resource_name"] == "app" and e["resource_status"] == "CREATE_COMPLETE"
               for e in events)

    engine = nestedflow.Engine(db_url=cli.db_url)
    try:
        assert len(testing.physical_objects(engine, stack["id"])) == 5
        cli("stack", "delete", "demo", "--wait")
        assert testing.physical_objects(engine, stack["id"]) == []
        assert engine.get_stack(stack["id"]).action == "DELETE"
    finally:
        engine.close()
    assert "demo" not in cli("stack", "list").stdout


def test_failing_example_rolls_back_and_exits_non_zero(cli):
    proc = cli("stack", "create", "broken", "-t", "examples/failing.yaml", "--enable-rollback",
               "--wait", expect=1)
    assert "ROLLBACK" in proc.stdout + proc.stderr
    # heatclient's default: no rollback, the failed create is kept.
    proc = cli("stack", "create", "kept", "-t", "examples/failing.yaml", "--wait", expect=1)
    assert "ERROR: Stack kept CREATE_FAILED" in proc.stderr


def test_errors_are_one_line_without_traceback(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("heat_template_version: 2018-08-31\nresources:\n  a: [unclosed\n")
    proc = cli("stack", "create", "x", "-t", str(bad), expect=1)
    assert proc.stderr.strip().startswith("ERROR:")
    assert "line" in proc.stderr and "column" in proc.stderr
    proc = cli("stack", "show", "nope", expect=1)
    assert "not found" in proc.stderr
    proc = cli("stack", "create", "x", "-t", "examples/webapp.yaml", "-P", "port=80", expect=1)
    assert "parameters.port" in proc.stderr
