"""The command line imports only what a command needs (issue: every
command took about a second because the engine, TaskFlow, oslo.messaging
and the database drivers were imported before anything was read)."""

import json
import subprocess
import sys

HEAVY = ("taskflow", "oslo_messaging", "kazoo", "alembic", "eventlet", "yaql", "networkx",
         "rich")

PROBE = """
import json, sys
from nestedflow.cmd import shell
code = shell.main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]), file=sys.stderr)
"""


def loaded(tmp_path, *argv):
    env = {"NESTEDFLOW_DB_URL": f"sqlite:///{tmp_path}/cli.sqlite", "PATH": "/usr/bin:/bin",
           "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, text=True,
                          capture_output=True, timeout=120)
    code, modules = json.loads(proc.stderr.strip().splitlines()[-1])
    assert code == 0, proc.stderr
    return set(modules), proc.stdout


def test_import_nestedflow_is_light():
    proc = subprocess.run([sys.executable, "-c", "import sys, nestedflow; "
                           "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                          text=True, capture_output=True, timeout=60, check=True)
    assert not set(proc.stdout.split()) & {"taskflow", "sqlalchemy", "oslo_messaging"}


def test_help_imports_no_engine(tmp_path):
    modules, out = loaded(tmp_path, "--help")
    assert "stack create" in out
    assert not modules & set(HEAVY + ("sqlalchemy", "oslo_db"))


def test_read_commands_import_no_traversal_machinery(tmp_path):
    # The first run creates the schema (and may import alembic/TaskFlow for it).
    loaded(tmp_path, "stack", "list")
    modules, _ = loaded(tmp_path, "stack", "list")
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_conductor_listing_imports_no_taskflow():
    # ``nestedflow conductor list`` reads ZooKeeper with kazoo alone.
    proc = subprocess.run([sys.executable, "-c", "import sys, nestedflow.conductor.listing; "
                           "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                          text=True, capture_output=True, timeout=60, check=True)
    assert not set(proc.stdout.split()) & {"taskflow", "sqlalchemy", "oslo_messaging"}
