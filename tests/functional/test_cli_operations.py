"""The operator's commands for previews, stored data, snapshots,
abandon/adopt and unhealthy resources (python-heatclient's OSC names), run
as ``nestedflow`` runs them (nestedflow.cmd.shell.main) on a nested template
with get_file, a template resource and a registry file passed as local paths."""

import io
import json

import pytest

import nestedflow
from nestedflow.cmd import shell
from nestedflow.testing import physical_objects

PARENT = """heat_template_version: 2018-08-31
parameters:
  v: {type: string, default: one}
resources:
  config:
    type: OS::Heat::TestResource
    properties:
      value: {get_file: motd.txt}
  child:
    type: child.yaml
    properties:
      v: {get_param: v}
  mapped:
    type: My::Thing
"""
CHILD = """heat_template_version: 2018-08-31
parameters:
  v: {type: string}
resources:
  inner:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: v}
"""
THING = """heat_template_version: 2018-08-31
resources:
  part:
    type: OS::Heat::TestResource
"""
ENV = """resource_registry:
  My::Thing: thing.yaml
"""


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("NESTEDFLOW_DB_URL", f"sqlite:///{tmp_path}/cli.sqlite")
    for name, text in (("parent.yaml", PARENT), ("child.yaml", CHILD), ("thing.yaml", THING),
                       ("env.yaml", ENV), ("motd.txt", "hello")):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)

    def run(*argv, expect=0):
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(list(argv), stdout=out, stderr=err)
        assert code == expect, out.getvalue() + err.getvalue()
        return out.getvalue()

    def run_json(*argv):
        return json.loads(run(*argv, "-f", "json"))

    run.json = run_json
    run.db_url = f"sqlite:///{tmp_path}/cli.sqlite"
    return run


def live(db_url):
    with nestedflow.Engine(db_url=db_url) as engine:
        return sorted(o.id for o in physical_objects(engine))


def test_operator_commands(cli, tmp_path):
    local = ("-t", "parent.yaml", "-e", "env.yaml")
    dry = cli.json("stack", "create", "web", *local, "--dry-run")
    assert dry["stack_name"] == "web"
    names = json.dumps(dry["resources"])
    assert all(name in names for name in ('"config"', '"inner"', '"part"'))
    assert cli.json("stack", "list") == []  # the dry run stored nothing

    cli("stack", "create", "web", *local, "--wait")
    template = cli.json("stack", "template", "show", "web")
    # heatclient's files map: local paths become file:// URLs.
    assert template["resources"]["child"]["type"].endswith("/child.yaml")
    env = cli.json("stack", "environment", "show", "web")
    assert env["resource_registry"]["My::Thing"].endswith("/thing.yaml")
    files = {name.rsplit("/", 1)[-1]: text
             for name, text in cli.json("stack", "file", "list", "web").items()}
    assert files["motd.txt"] == "hello" and "child.yaml" in files and "thing.yaml" in files

    changes = cli.json("stack", "update", "web", "--existing", "-P", "v=two", "--dry-run",
                       "--show-nested")
    assert sorted(changes) == ["added", "deleted", "replaced", "unchanged", "updated"]
    updated = {(r.get("parent_resource"), r["resource_name"]) for r in changes["updated"]}
    assert updated == {(None, "child"), ("child", "inner")}

    snapshot = cli.json("stack", "snapshot", "create", "web", "--name", "before")
    assert snapshot["status"] == "COMPLETE"
    cli("stack", "update", "web", "--existing", "-P", "v=two", "--wait")
    listed = cli.json("stack", "snapshot", "list", "web")
    assert [s["id"] for s in listed] == [snapshot["id"]]
    shown = cli.json("stack", "snapshot", "show", "web", snapshot["id"])
    assert shown["data"]["resources"]["config"]["properties"]["value"] == "hello"
    cli("stack", "snapshot", "restore", "web", snapshot["id"], "--wait")
    cli("stack", "snapshot", "delete", "web", snapshot["id"], "-y")
    assert cli.json("stack", "snapshot", "list", "web") == []

    cli("stack", "resource", "mark", "unhealthy", "web", "config", "disk gone")
    resources = {r["resource_name"]: r for r in cli.json("stack", "resource", "list", "web")}
    assert resources["config"]["resource_status"] == "CHECK_FAILED"
    cli("stack", "resource", "mark", "unhealthy", "web", "config", "--reset")

    before = live(cli.db_url)
    cli("stack", "abandon", "web", "--output-file", "abandoned.json")
    assert cli.json("stack", "list") == []
    cli("stack", "adopt", "web2", "--adopt-file", "abandoned.json", "--wait")
    assert live(cli.db_url) == before, "adopt created or lost physical objects"
    exported = json.loads(cli("stack", "export", "web2", "-f", "json"))
    assert exported["name"] == "web2"
