"""``nestedflow template validate|version list|function list`` (heatclient's
``openstack orchestration template ...``), on a real engine over SQLite."""

import io
import json

from nestedflow.cmd import shell


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = shell.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


TEMPLATE = """heat_template_version: 2016-10-14
description: demo
parameters:
  flavor: {type: string, label: Flavor, constraints: [{allowed_values: [s, l]}]}
conditions:
  big: {equals: [{get_param: flavor}, l]}
resources:
  server: {type: OS::Heat::None, condition: big}
"""


def test_validate_prints_heats_answer(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    code, out, err = run("--db-url", db, "template", "validate", "-t", str(path), "-f", "json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["Description"] == "demo"
    assert answer["Parameters"]["flavor"] == {
        "Type": "String", "Description": "", "NoEcho": "false", "Label": "Flavor",
        "AllowedValues": ["s", "l"]}
    code, out, err = run("--db-url", db, "template", "validate", "-t", str(path),
                         "-P", "flavor=xl")
    assert code == 1
    assert "parameters.flavor" in err


def test_version_list():
    code, out, err = run("template", "version", "list", "-f", "json")
    assert code == 0, err
    rows = json.loads(out)
    # Aliases as a list, as Heat's list_template_versions answers them.
    assert rows[0] == {"Version": "heat_template_version.2013-05-23", "Type": "hot",
                       "Aliases": []}
    assert rows[-1] == {"Version": "heat_template_version.2021-04-16", "Type": "hot",
                        "Aliases": ["heat_template_version.wallaby"]}


def test_function_list_per_version():
    code, out, err = run("template", "function", "list", "heat_template_version.2016-10-14",
                         "-f", "value", "-c", "Functions")
    assert code == 0, err
    names = out.split()
    assert "yaql" in names and "if" in names and "filter" not in names
    assert "Fn::Select" not in names  # removed in 2015-10-15
    assert "equals" not in names
    code, out, _ = run("template", "function", "list", "--template-version", "pike",
                       "--with_conditions", "-f", "value", "-c", "Functions")
    assert {"equals", "contains", "make_url"} <= set(out.split())
    code, out, err = run("template", "function", "list", "2012-01-01")
    assert code == 1 and "not found" in err


def test_output_show_has_heats_output_error(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("heat_template_version: 2016-10-14\n"
                    "outputs:\n  bad: {value: {str_split: [',', 'a,b', 7]}}\n")
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    code, out, err = run("--db-url", db, "stack", "create", "s", "-t", str(path), "--wait")
    assert code == 0, err
    code, out, err = run("--db-url", db, "stack", "output", "show", "s", "bad", "-f", "json")
    assert code == 0, err
    assert json.loads(out) == {"output_key": "bad", "output_value": None,
                               "description": "No description given",
                               "output_error": "outputs.bad.str_split: index 7 is not "
                                               "between 0 and 1"}
