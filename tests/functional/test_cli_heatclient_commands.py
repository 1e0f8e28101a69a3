"""Commands heatclient's OSC plugin has and nestedflow's command line now
answers under the same names, with heatclient's output shape (each test
cites the heatclient command it follows, python-heatclient 5.3.0)."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

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


def _runner(tmp_path, db_url):
    """``run(*args, expect=0)``: the installed ``nestedflow`` on ``db_url``;
    its output, after checking its exit status and that nothing crashed."""
    env = dict(os.environ, NESTEDFLOW_DB_URL=db_url, XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)

    def run(*args, expect=0):
        proc = subprocess.run([EXE, *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        if expect:
            assert proc.stderr.startswith("ERROR: ") and proc.stderr.count("\n") == 1
        return proc.stdout

    return run


@pytest.fixture
def nf(tmp_path):
    (tmp_path / "top.yaml").write_text(FAILING_GROUP)
    (tmp_path / "inner.yaml").write_text(INNER)
    return _runner(tmp_path, f"sqlite:///{tmp_path}/f.sqlite")


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
    short = failures.indent_and_truncate(text)
    assert short.splitlines() == ["    ..."] + [f"    line {i}" for i in range(15, 25)]
    assert len(failures.indent_and_truncate(text, truncate=False).splitlines()) == 25


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
    # heatclient's _list appends "Deletion Time" with --deleted (after Parent).
    rows = json.loads(nf("stack", "list", "--deleted", "--nested", "-f", "json"))
    assert list(rows[0]) == ["ID", "Stack Name", "Stack Status", "Creation Time",
                             "Updated Time", "Parent", "Deletion Time"]
    deleted = {row["Stack Name"]: row["Deletion Time"] for row in rows}
    assert deleted["shown"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", deleted["gone"])
    assert "Deletion Time" not in json.loads(nf("stack", "list", "-f", "json"))[0]


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


METADATA = """\
heat_template_version: 2018-08-31
resources:
  r:
    type: OS::Heat::TestResource
    metadata: {role: web, ports: [80, 443]}
    properties: {value: shown}
  bare: {type: OS::Heat::None}
"""


def test_stack_resource_metadata(nf, tmp_path):
    """heatclient/osc/v1/resource.py ResourceMetadata (a JsonFormat): the
    metadata's keys are the fields, one JSON object by default; Heat's
    answer for a resource without metadata is {}; an unknown resource is
    one error line."""
    (tmp_path / "m.yaml").write_text(METADATA)
    nf("stack", "create", "m", "-t", "m.yaml", "--wait")
    assert json.loads(nf("stack", "resource", "metadata", "m", "r")) == \
        {"role": "web", "ports": [80, 443]}
    assert yaml.safe_load(nf("stack", "resource", "metadata", "m", "r", "-f", "yaml")) == \
        {"role": "web", "ports": [80, 443]}
    assert json.loads(nf("stack", "resource", "metadata", "m", "bare")) == {}
    nf("stack", "resource", "metadata", "m", "nope", expect=1)
    nf("stack", "resource", "metadata", "nope", "r", expect=1)


def test_stack_resource_show_with_attr(nf, tmp_path):
    """heatclient's ``stack resource show --with-attr`` (repeatable) sends
    with_attr; Heat's answer then has ``attributes``: every attribute of
    the type, and the named ones it lacks (None: Heat's
    format_resource_attributes)."""
    (tmp_path / "m.yaml").write_text(METADATA)
    nf("stack", "create", "m", "-t", "m.yaml", "--wait")
    assert "attributes" not in json.loads(nf("stack", "resource", "show", "m", "r",
                                             "-f", "json"))
    shown = json.loads(nf("stack", "resource", "show", "m", "r", "--with-attr", "output",
                          "--with-attr", "no_such", "-f", "json"))
    assert list(shown)[-1] == "attributes"
    assert shown["attributes"] == {"output": "shown", "no_such": None}
    assert "| attributes             | output: shown " in nf(
        "stack", "resource", "show", "m", "r", "--with-attr", "output")


NESTING = """\
heat_template_version: 2018-08-31
parameters:
  label: {type: string, default: outer}
resources:
  child:
    type: child.yaml
    properties: {name: {get_param: label}}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def: {type: child.yaml, properties: {name: member}}
  inline:
    type: OS::Heat::Stack
    properties:
      template: {heat_template_version: 2018-08-31, parameters: {p: {type: number}}}
      parameters: {p: 4}
  plain: {type: OS::Heat::None}
"""
CHILD = """\
heat_template_version: 2018-08-31
description: the child
parameters:
  name: {type: string, description: what it is called}
  colour: {type: string, default: blue}
resources:
  leaf: {type: leaf.yaml}
"""
LEAF = """\
heat_template_version: 2018-08-31
parameters:
  depth: {type: number, default: 3}
"""


def test_template_validate_show_nested_and_ignore_errors(nf, tmp_path):
    """heatclient/osc/v1/template.py Validate's --show-nested and
    --ignore-errors, answered as heat/engine/service.py validate_template:
    NestedParameters per resource making a nested stack (Stack.
    get_nested_parameters; a ResourceGroup as a group of one member "0"),
    recursively; ignore_errors split on "," and checked against Heat's
    error codes (ERROR_CODE_MAP: 99001 only)."""
    for name, text in (("n.yaml", NESTING), ("child.yaml", CHILD), ("leaf.yaml", LEAF)):
        (tmp_path / name).write_text(text)
    plain = yaml.safe_load(nf("orchestration", "template", "validate", "-t", "n.yaml"))
    assert "NestedParameters" not in plain
    answer = yaml.safe_load(nf("orchestration", "template", "validate", "-t", "n.yaml",
                               "--show-nested"))
    nested = answer["NestedParameters"]
    assert set(nested) == {"child", "group", "inline"}
    child_type = (tmp_path / "child.yaml").as_uri()
    assert nested["child"]["Type"] == child_type
    assert nested["child"]["Description"] == "the child"
    assert nested["child"]["Parameters"]["name"] == {
        "Type": "String", "Description": "what it is called", "NoEcho": "false",
        "Label": "name", "Value": "outer"}
    assert nested["child"]["Parameters"]["colour"]["Default"] == "blue"
    leaf = nested["child"]["NestedParameters"]["leaf"]
    assert leaf["Type"] == (tmp_path / "leaf.yaml").as_uri()
    assert leaf["Parameters"]["depth"]["Default"] == 3
    group = nested["group"]
    assert (group["Type"], group["Parameters"]) == ("OS::Heat::ResourceGroup", {})
    member = group["NestedParameters"]["0"]
    assert member["Type"] == child_type
    assert member["Parameters"]["name"]["Value"] == "member"
    assert nested["inline"]["Parameters"]["p"]["Value"] == 4
    assert answer["Parameters"] == plain["Parameters"]

    assert yaml.safe_load(nf("orchestration", "template", "validate", "-t", "n.yaml",
                             "--ignore-errors", "99001")) == plain
    nf("orchestration", "template", "validate", "-t", "n.yaml", "--ignore-errors",
       "99001,12345", expect=1)


def test_orchestration_service_list(fresh_db_url, tmp_path):
    """heatclient/osc/v1/service.py ListService's columns, one row per
    engine heartbeat: an engine beating is up; one whose last beat is
    older than two of its intervals is down (heat/common/
    service_utils.py format_service); the command's own engine does
    not beat (it runs nothing)."""
    import nestedflow

    run = _runner(tmp_path, fresh_db_url)
    assert json.loads(run("orchestration", "service", "list", "-f", "json")) == []
    engine = nestedflow.Engine(db_url=fresh_db_url)
    try:
        engine.runtime  # noqa: B018 -- built: it beats
        engine.db.beat("gone-engine", "elsewhere", 4242, 0.05, binary="nestedflow-conductor")
        time.sleep(0.5)
        rows = json.loads(run("orchestration", "service", "list", "-f", "json"))
    finally:
        engine.close()
    assert [list(row) for row in rows] == [["Hostname", "Binary", "Engine ID", "Host",
                                            "Topic", "Updated At", "Status"]] * 2
    by_id = {row["Engine ID"]: row for row in rows}
    gone = by_id.pop("gone-engine")
    assert (gone["Hostname"], gone["Host"], gone["Binary"], gone["Status"]) == (
        "elsewhere", "elsewhere", "nestedflow-conductor", "down")
    [(engine_id, live)] = by_id.items()
    assert engine_id.startswith("engine-")
    assert (live["Binary"], live["Status"]) == (os.path.basename(sys.argv[0]), "up")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", live["Updated At"])
    # A closed engine removes its heartbeat.
    assert [row["Engine ID"] for row in json.loads(
        run("orchestration", "service", "list", "-f", "json"))] == ["gone-engine"]


def test_orchestration_service_list_names_conductors(cluster, tmp_path):
    """A conductor's engine beats too: listed as nestedflow-conductor, its
    engine id its name's (the runs it owns carry it)."""
    name = f"svc-{uuid.uuid4().hex[:6]}"
    cluster.start(name)
    rows = json.loads(_runner(tmp_path, cluster.db_url)(
        "orchestration", "service", "list", "-f", "json"))
    mine = [row for row in rows if row["Engine ID"].startswith(f"{name}-")]
    assert [(row["Binary"], row["Status"]) for row in mine] == [("nestedflow-conductor", "up")]
