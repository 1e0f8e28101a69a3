"""The command line as an operator uses it (``openstack stack ...`` habits),
through the real ``nestedflow`` console script on a nested template whose
files -- a ``get_file`` script, a template resource and a resource_registry
entry -- are passed only as local paths (the files map is built as
heatclient builds it)."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

TEMPLATES = {
    "scripts/boot.sh": "#!/bin/sh\necho booted\n",
    "lib/server.yaml": """\
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: plain}
resources:
  boot:
    type: OS::Heat::TestResource
    properties:
      value: {get_file: ../scripts/boot.sh}
  tag:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: label}
outputs:
  script: {value: {get_attr: [boot, output]}}
  label: {value: {get_attr: [tag, output]}}
""",
    "top.yaml": """\
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: first}
resources:
  app_server_with_a_long_name:
    type: lib/server.yaml
    properties:
      label: {get_param: label}
  db:
    type: My::Server
  note:
    type: OS::Heat::TestResource
    properties:
      value: {get_file: scripts/boot.sh}
outputs:
  app_label: {value: {get_attr: [app_server_with_a_long_name, label]}}
  script: {value: {get_attr: [db, script]}}
  both: {value: [{get_attr: [note, output]}, {get_param: label}]}
""",
    "env/base.yaml": "resource_registry:\n  My::Server: ../lib/server.yaml\n"
                     "parameters:\n  label: from-base\n",
    "env/override.yaml": "parameters:\n  label: from-override\n",
}


@pytest.fixture
def nf(tmp_path):
    work = tmp_path / "work"
    for name, text in TEMPLATES.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = dict(os.environ, NESTEDFLOW_DB_URL=f"sqlite:///{tmp_path}/op.sqlite")
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)
    exe = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"

    def run(*args, expect=0):
        proc = subprocess.run([exe, *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        return proc.stdout

    return run


def test_operator_session(nf):
    created = json.loads(nf("stack", "create", "shop", "-t", "top.yaml", "-e", "env/base.yaml",
                            "-e", "env/override.yaml", "--wait", "-f", "json"))
    assert created["stack_status"] == "CREATE_COMPLETE", created
    # Environments merged in order; get_file through a template resource and
    # through a registry entry, each relative to the file naming it.
    assert created["outputs"] == {"app_label": "from-override",
                                  "script": "#!/bin/sh\necho booted\n",
                                  "both": ["#!/bin/sh\necho booted\n", "from-override"]}

    # -- formats and columns --------------------------------------------------
    listed = yaml.safe_load(nf("stack", "list", "-f", "yaml"))
    assert [s["Stack Name"] for s in listed] == ["shop"]
    assert nf("stack", "show", "shop", "-f", "value", "-c", "stack_status") == \
        "CREATE_COMPLETE\n"
    rows = list(csv.DictReader(io.StringIO(
        nf("stack", "resource", "list", "shop", "-f", "csv"))))
    types = {r["resource_name"]: r["resource_type"] for r in rows}
    assert types["db"].endswith("/lib/server.yaml")
    nested = json.loads(nf("stack", "resource", "list", "shop", "-n", "1", "-f", "json"))
    assert len(nested) == 3 + 2 + 2
    table = nf("stack", "resource", "list", "shop", "--max-width", "80")
    # heatclient's five headings alone need 105 characters with this name.
    assert max(map(len, table.splitlines())) <= 105
    assert "| app_server_with_a_long_name |" in table and "…" not in table
    shown = nf("stack", "show", "shop")
    assert "app_label: from-override" in shown      # outputs as name: value lines
    assert nf("stack", "output", "show", "shop", "app_label", "-f", "value",
              "-c", "output_value") == "from-override\n"
    assert json.loads(nf("stack", "output", "list", "shop", "-f", "json"))[0]["output_key"]
    resource = json.loads(nf("stack", "resource", "show", "shop", "note", "-f", "json"))
    assert resource["resource_status"] == "CREATE_COMPLETE"
    events = json.loads(nf("stack", "event", "list", "shop", "-f", "json"))
    note = next(e for e in events if e["resource_name"] == "note"
                and e["resource_status"] == "CREATE_COMPLETE")
    event = json.loads(nf("stack", "event", "show", "shop", "note", str(note["id"]),
                          "-f", "json"))
    assert event["id"] == note["id"]

    # -- --existing without -t keeps the stored template and its files --------
    updated = json.loads(nf("stack", "update", "shop", "--existing", "-P", "label=second",
                            "--wait", "-f", "json"))
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert updated["outputs"]["app_label"] == "second"
    assert updated["outputs"]["script"] == "#!/bin/sh\necho booted\n"

    # -- the simple actions -----------------------------------------------------
    for command, state in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
                           ("check", "CHECK_COMPLETE")):
        assert nf("stack", command, "shop", "--wait", "-f", "value",
                  "-c", "stack_status") == state + "\n"

    # -- several stacks deleted at once ------------------------------------------
    nf("stack", "create", "second", "-t", "top.yaml", "-e", "env/base.yaml", "--wait")
    out = nf("stack", "delete", "shop", "second", "--yes", "--wait")
    assert out == "Stack shop deleted\nStack second deleted\n"
    assert nf("stack", "list", "-f", "value") == ""


def test_url_in_template_is_refused(nf, tmp_path):
    path = tmp_path / "work" / "remote.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources:\n"
                    "  a: {type: 'https://example.com/server.yaml'}\n")
    nf("stack", "create", "x", "-t", "remote.yaml", expect=1)
    proc = subprocess.run(
        [shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow",
         "stack", "create", "x", "-t", str(path)],
        env=dict(os.environ, NESTEDFLOW_DB_URL=f"sqlite:///{tmp_path}/u.sqlite"),
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == (f"ERROR: {path}: https://example.com/server.yaml refused: "
                           "nestedflow reads local files only and fetches nothing over the "
                           "network\n")
