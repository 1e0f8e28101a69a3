"""``software config ...`` and ``software deployment ...`` as heatclient's
OSC plugin has them (python-heatclient 5.3.0 heatclient/osc/v1/
software_config.py and software_deployment.py: arguments, columns and
output shapes; common/deployment_utils.py build_derived_config_params for
the derived config a deployment deploys), on the real console script."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

EXE = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"


@pytest.fixture
def nf(tmp_path, fresh_db_url):
    env = dict(os.environ, NESTEDFLOW_DB_URL=fresh_db_url, XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)

    def run(*args, expect=0):
        proc = subprocess.run([EXE, *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        return proc

    return run


def test_software_config_lifecycle(nf, tmp_path):
    (tmp_path / "script.sh").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "definition.yaml").write_text(
        "inputs:\n- name: foo\n  default: bar\noutputs:\n- name: result\noptions: {a: 1}\n")
    # heatclient's CreateConfig: --config-file is the script, --definition-file
    # the inputs/outputs/options; JSON by default.
    made = json.loads(nf("software", "config", "create", "cfg", "--config-file", "script.sh",
                         "--definition-file", "definition.yaml").stdout)
    assert (made["name"], made["group"], made["config"]) == ("cfg", "Heat::Ungrouped",
                                                             "#!/bin/sh\necho hi\n")
    assert made["inputs"] == [{"name": "foo", "type": "String", "default": "bar"}]
    assert made["outputs"] == [{"name": "result", "type": "String", "error_output": False}]
    assert made["options"] == {"a": 1}

    rows = json.loads(nf("software", "config", "list", "-f", "json").stdout)
    assert [list(r) for r in rows] == [["id", "name", "group", "creation_time"]]
    shown = yaml.safe_load(nf("software", "config", "show", made["id"]).stdout)  # YAML default
    assert list(shown) == ["id", "name", "group", "config", "inputs", "outputs", "options",
                           "creation_time"]
    assert nf("software", "config", "show", made["id"], "--config-only").stdout == \
        "#!/bin/sh\necho hi\n\n"

    # Bad inputs are refused by OS::Heat::SoftwareConfig's schema, nothing stored.
    (tmp_path / "bad.yaml").write_text("inputs:\n- description: no name\n")
    proc = nf("software", "config", "create", "bad", "--definition-file", "bad.yaml", expect=1)
    assert proc.stderr.startswith("ERROR: ") and proc.stderr.count("\n") == 1
    assert len(json.loads(nf("software", "config", "list", "-f", "json").stdout)) == 1

    proc = nf("software", "config", "delete", made["id"], "nope", expect=1)
    assert proc.stdout == "Software config with ID nope not found\n"
    assert proc.stderr == "ERROR: Unable to delete 1 of the 2 software configs.\n"
    assert nf("software", "config", "list", "-f", "value").stdout == ""


def test_software_deployment_lifecycle(nf, fresh_db_url):
    """A deployment made from the command line deploys a derived config (its
    inputs, then deploy_server_id, deploy_action, deploy_signal_transport),
    IN_PROGRESS for the server's agent; the agent's report (Heat's
    update_software_deployment) shows in ``output show``."""
    import nestedflow

    created = yaml.safe_load(nf("software", "deployment", "create", "dep", "--server", "srv1",
                                "--input-value", "foo=baz").stdout)
    assert created["status"] == "IN_PROGRESS" and created["action"] == "UPDATE"
    assert list(created) == sorted(created)  # heatclient: zip(*sorted(sd.to_dict().items()))
    metadata = json.loads(nf("software", "deployment", "metadata", "show", "srv1").stdout)
    (derived,) = metadata
    assert derived["name"] == "dep" and derived["id"] == created["config_id"]
    assert [(i["name"], i.get("value")) for i in derived["inputs"]] == [
        ("foo", "baz"), ("deploy_server_id", "srv1"), ("deploy_action", "UPDATE"),
        ("deploy_signal_transport", "NO_SIGNAL")]

    rows = json.loads(nf("software", "deployment", "list", "-f", "json").stdout)
    assert [list(r) for r in rows] == [["id", "config_id", "server_id", "action", "status"]]
    assert list(json.loads(nf("software", "deployment", "list", "--long", "-f",
                              "json").stdout)[0]) == [
        "id", "config_id", "server_id", "action", "status", "creation_time", "status_reason"]

    engine = nestedflow.Engine(db_url=fresh_db_url)
    try:
        engine.update_software_deployment(
            created["id"], None, None, {"deploy_stdout": "done\n", "result": "42",
                                        "deploy_status_code": 0},
            None, "COMPLETE", "Outputs received", None)
    finally:
        engine.close()
    shown = json.loads(nf("software", "deployment", "show", created["id"], "--long",
                          "-f", "json").stdout)
    assert list(shown) == ["id", "server_id", "config_id", "creation_time", "updated_time",
                           "status", "status_reason", "input_values", "action",
                           "output_values"]
    assert shown["status"] == "COMPLETE"
    out = nf("software", "deployment", "output", "show", created["id"], "result").stdout
    assert out == "output_value:\n\n  result: 42\n"
    out = nf("software", "deployment", "output", "show", created["id"], "--all").stdout
    assert out.startswith("output_values:\n\n")
    assert "  deploy_stdout: |\n    done\n" in out
    proc = nf("software", "deployment", "output", "show", created["id"], "nope", expect=1)
    assert proc.stderr == f"ERROR: Output nope does not exist in deployment {created['id']}\n"

    nf("software", "deployment", "delete", created["id"])
    # heatclient deletes the derived config with it.
    assert nf("software", "deployment", "list", "-f", "value").stdout == ""
    assert nf("software", "config", "list", "-f", "value").stdout == ""


def test_swift_signal_transport_is_refused(nf):
    proc = nf("software", "deployment", "create", "d", "--server", "s",
              "--signal-transport", "TEMP_URL_SIGNAL", expect=1)
    assert proc.stderr == ("ERROR: signal transport TEMP_URL_SIGNAL refused: it needs Swift "
                           "nestedflow does not have; use NO_SIGNAL or HEAT_SIGNAL\n")
    assert nf("software", "deployment", "list", "-f", "value").stdout == ""
