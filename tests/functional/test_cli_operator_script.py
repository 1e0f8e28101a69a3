"""An operator's shell script written for ``openstack stack ...`` runs
unchanged against nestedflow's command line, with conductors behind a
jobboard (so the script's polling sees IN_PROGRESS first): create with a
parameter and an environment, poll ``-f value -c stack_status``, list
resources with ``-c resource_name -c resource_status``, show an output
with ``-f value -c output_value``, ``stack list`` with heatclient's
title-case columns, delete ``--wait -y``.

The columns and values the script relies on are heatclient's
(osc/v1/stack.py ``_list``, ``_show_stack``, ``OutputShowStack``;
osc/v1/resource.py ``ResourceList``), python-heatclient 5.3.0."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "operator.sh"
EXE = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  label: {type: string}
  size: {type: number, default: 1}
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}, wait_secs: 2}
  second:
    type: OS::Heat::TestResource
    properties: {value: {get_param: size}}
    depends_on: first
outputs:
  label: {value: {get_attr: [first, output]}}
"""


@pytest.fixture
def cluster_db_url(fresh_database):
    # The script lists every stack: a database of its own.
    from tests.conftest import PG_URL

    return fresh_database(PG_URL)


def test_operator_script_runs_unchanged(cluster, tmp_path):
    cluster.start("c1")
    (tmp_path / "app.yaml").write_text(TEMPLATE)
    (tmp_path / "env.yaml").write_text("parameters:\n  size: 3\n")
    env = dict(os.environ, OPENSTACK=EXE, NESTEDFLOW_DB_URL=cluster.db_url,
               NESTEDFLOW_JOBBOARD_URL=cluster.jobboard_url)
    proc = subprocess.run(["bash", str(SCRIPT), "web", "app.yaml", "env.yaml"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines() == [
        "status: CREATE_COMPLETE",
        "first CREATE_COMPLETE",
        "second CREATE_COMPLETE",
        "label: from-script",
        "web CREATE_COMPLETE",
        "Stack web deleted",
        "deleted",
    ]
