"""Commands heatclient's OSC plugin has and nestedflow's command line now
answers under the same names, with heatclient's output shape (each test
cites the heatclient command it follows, python-heatclient 5.3.0)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from nestedflow.cmd.commands import failures

EXE = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"

FAILING_GROUP = """\
heat_template_version: 2018-08-31
resources:
  ok: {type: OS::Heat::TestResource}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Heat::TestResource
        properties: {fail: true}
  inner:
    type: inner.yaml
"""
INNER = """\
heat_template_version: 2018-08-31
resources:
  fine: {type: OS::Heat::None}
"""


@pytest.fixture
def nf(tmp_path):
    (tmp_path / "top.yaml").write_text(FAILING_GROUP)
    (tmp_path / "inner.yaml").write_text(INNER)
    env = dict(os.environ, NESTEDFLOW_DB_URL=f"sqlite:///{tmp_path}/f.sqlite",
               XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)

    def run(*args, expect=0):
        proc = subprocess.run([EXE, *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        return proc.stdout

    return run


def test_stack_failures_list_recurses_into_failed_nested_stacks(nf):
    """heatclient/osc/v1/stack_failures.py ListStackFailures: a failed
    nested-stack resource is replaced by the failed resources inside it,
    keyed by their dotted path; each shows resource_type,
    physical_resource_id, status (ACTION_STATUS) and an indented reason."""
    nf("stack", "create", "f", "-t", "top.yaml", "--disable-rollback", "--wait", expect=1)
    out = nf("stack", "failures", "list", "f")
    blocks = out.split("\n")
    assert blocks[0] == "f.group.0:"
    entries = [line for line in blocks if line and not line.startswith(" ")]
    assert entries == ["f.group.0:", "f.group.1:"]
    assert "  resource_type: OS::Heat::TestResource" in blocks
    assert "  status: CREATE_FAILED" in blocks
    assert "  status_reason: |" in blocks
    reason = blocks[blocks.index("  status_reason: |") + 1]
    assert reason.startswith("    ") and "Test Resource failed" in reason
    # The complete resources and the complete nested stack are not listed.
    assert "f.ok" not in out and "f.inner" not in out


def test_stack_failures_list_of_a_healthy_stack_prints_nothing(nf):
    nf("stack", "create", "g", "-t", "inner.yaml", "--wait")
    assert nf("stack", "failures", "list", "g") == ""


def test_reasons_keep_their_last_lines_unless_long():
    """heatclient/common/format_utils.py indent_and_truncate: the last 10
    lines after a '...' line, each indented; --long keeps them all."""
    text = "\n".join(f"line {i}" for i in range(25))
    short = failures._indent_and_truncate(text)
    assert short.splitlines() == ["    ..."] + [f"    line {i}" for i in range(15, 25)]
    assert len(failures._indent_and_truncate(text, truncate=False).splitlines()) == 25


def test_orchestration_names_answer_as_the_template_commands(nf):
    """heatclient's ``openstack orchestration template ...`` names
    (setup.cfg openstack.orchestration.v1) beside nestedflow's own."""
    assert nf("orchestration", "template", "version", "list", "-f", "value") == \
        nf("template", "version", "list", "-f", "value")
    versions = json.loads(nf("orchestration", "template", "version", "list", "-f", "json"))
    # heatclient's osc/v1/template.py reads versions[1].aliases: two or more.
    assert len(versions) >= 2
    functions = nf("orchestration", "template", "function", "list",
                   "heat_template_version.2016-10-14", "-f", "value", "-c", "Functions")
    assert "get_file" in functions.split()
    answer = json.loads(nf("orchestration", "template", "validate", "-t", "inner.yaml",
                           "-f", "json"))
    assert answer == json.loads(nf("template", "validate", "-t", "inner.yaml", "-f", "json"))


def test_orchestration_build_info(nf):
    """heatclient/osc/v1/build_info.py BuildInfo: fields api and engine,
    each a mapping with the revision (heat/api/openstack/v1/build_info.py)."""
    from importlib.metadata import version

    info = json.loads(nf("orchestration", "build", "info", "-f", "json"))
    assert info == {"api": {"revision": version("nestedflow")},
                    "engine": {"revision": version("nestedflow")}}
    table = nf("orchestration", "build", "info")
    assert '"revision": ' in table


PARAMS = """\
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: plain}
  size: {type: string, default: "1"}
resources:
  a:
    type: OS::Heat::TestResource
    properties: {value: {list_join: ['-', [{get_param: label}, {get_param: size}]]}}
outputs:
  value: {value: {get_attr: [a, output]}}
"""


def test_update_clear_parameter_restores_the_default(nf, tmp_path):
    """heatclient's ``stack update --existing --clear-parameter`` (Heat's
    PATCH clear_parameters, heat/engine/service.py _prepare_stack_updates:
    the stored parameters but the cleared ones, then the new ones)."""
    (tmp_path / "p.yaml").write_text(PARAMS)
    nf("stack", "create", "p", "-t", "p.yaml", "-P", "label=first", "-P", "size=5", "--wait")
    value = nf("stack", "output", "show", "p", "value", "-f", "value", "-c", "output_value")
    assert value == "first-5\n"
    nf("stack", "update", "p", "--existing", "--clear-parameter", "label", "--wait")
    value = nf("stack", "output", "show", "p", "value", "-f", "value", "-c", "output_value")
    assert value == "plain-5\n"
    nf("stack", "update", "p", "--existing", "--clear-parameter", "size", "-P", "label=x",
       "--wait")
    value = nf("stack", "output", "show", "p", "value", "-f", "value", "-c", "output_value")
    assert value == "x-1\n"


def test_list_deleted_hidden_and_all_projects(nf, tmp_path):
    """heatclient's ``stack list --deleted --hidden --all-projects``; hidden
    stacks are those tagged with [engine] hidden_stack_tags (Heat's
    hidden_stack_tags, default data-processing-cluster)."""
    (tmp_path / "p.yaml").write_text(PARAMS)
    nf("stack", "create", "shown", "-t", "p.yaml", "--wait")
    nf("stack", "create", "hidden", "-t", "p.yaml", "--tags", "data-processing-cluster,x",
       "--wait")
    nf("stack", "create", "gone", "-t", "p.yaml", "--wait")
    nf("stack", "delete", "gone", "--yes", "--wait")

    def names(*flags):
        return sorted(nf("stack", "list", *flags, "-f", "value", "-c", "Stack Name").split())

    assert names() == ["shown"]
    assert names("--hidden") == ["hidden", "shown"]
    assert names("--deleted") == ["gone", "shown"]
    assert names("--deleted", "--hidden", "--all-projects") == ["gone", "hidden", "shown"]
    gone = nf("stack", "list", "--deleted", "-f", "value", "-c", "Stack Name",
              "-c", "Stack Status").splitlines()
    assert "gone DELETE_COMPLETE" in gone


def test_resource_type_list_and_show(nf):
    """heatclient/osc/v1/resource_type.py: ``Resource Type`` (and
    ``Description`` with --long) sorted; show answers the type's schema
    (YAML), or with --template-type hot|cfn the template Heat's
    generate_template makes; the same answers heat-api gets."""
    types = json.loads(nf("orchestration", "resource", "type", "list", "-f", "json"))
    names = [t["Resource Type"] for t in types]
    assert names == sorted(names) and "OS::Heat::Value" in names
    waits = json.loads(nf("orchestration", "resource", "type", "list", "--filter",
                          "name=OS::Heat::Wait", "--long", "-f", "json"))
    assert [t["Resource Type"] for t in waits] == ["OS::Heat::WaitCondition",
                                                   "OS::Heat::WaitConditionHandle"]
    assert all(t["Description"] for t in waits)

    schema = yaml.safe_load(nf("orchestration", "resource", "type", "show", "OS::Heat::Value"))
    assert schema["resource_type"] == "OS::Heat::Value"
    assert set(schema["properties"]) == {"type", "value"}
    assert schema["support_status"]["status"] == "SUPPORTED"
    hot = yaml.safe_load(nf("orchestration", "resource", "type", "show", "OS::Heat::Value",
                            "--template-type", "hot"))
    assert hot["resources"]["Value"]["type"] == "OS::Heat::Value"
    assert hot["outputs"]["value"]["value"] == {"get_attr": ["Value", "value"]}
    cfn = yaml.safe_load(nf("orchestration", "resource", "type", "show", "OS::Heat::Value",
                            "--template-type", "CFN"))
    assert cfn["HeatTemplateFormatVersion"] == "2012-12-12"
    assert nf("orchestration", "resource", "type", "show", "Nope::X", expect=1) == ""
    assert nf("orchestration", "resource", "type", "show", "OS::Heat::Value",
              "--template-type", "hot", "--long", expect=1) == ""


def test_stack_show_has_heats_description_and_parameters(nf, tmp_path):
    """heat/engine/api.py format_stack: description, parameters (hidden ones
    masked, with OS::stack_id, OS::stack_name, OS::project_id), and the
    capabilities and notification_topics Heat answers empty."""
    (tmp_path / "d.yaml").write_text(
        "heat_template_version: 2018-08-31\ndescription: demo stack\nparameters:\n"
        "  a: {type: string, default: x}\n  pw: {type: string, hidden: true, default: s3}\n"
        "resources:\n  r: {type: OS::Heat::None}\n")
    shown = json.loads(nf("stack", "create", "d", "-t", "d.yaml", "-P", "a=y", "--wait",
                          "-f", "json"))
    assert list(shown)[:9] == ["id", "stack_name", "description", "creation_time",
                               "updated_time", "stack_status", "stack_status_reason",
                               "parameters", "outputs"]
    assert shown["description"] == "demo stack"
    assert shown["parameters"] == {"a": "y", "pw": "******", "OS::stack_id": shown["id"],
                                   "OS::stack_name": "d", "OS::project_id": None}
    assert (shown["capabilities"], shown["notification_topics"]) == ([], [])
    assert "s3" not in nf("stack", "show", "d")
