"""The command line imports only what a command needs (issue: every
command took about a second because the engine, TaskFlow, oslo.messaging
and the database drivers were imported before anything was read)."""

import json
import os
import subprocess
import sys

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "webapp.yaml")
HEAVY = ("taskflow", "oslo_messaging", "kazoo", "alembic", "eventlet", "yaql", "networkx",
         "rich")

PROBE = """
import json, sys
from nestedflow.cmd import shell
code = shell.main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def loaded(tmp_path, *argv, packages=True):
    """The top-level packages (``packages=False``: every module) the
    command imported, and its output."""
    env = {"NESTEDFLOW_DB_URL": f"sqlite:///{tmp_path}/cli.sqlite", "PATH": "/usr/bin:/bin",
           "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, text=True,
                          capture_output=True, timeout=120)
    code, modules = json.loads(proc.stderr.strip().splitlines()[-1])
    assert code == 0, proc.stderr
    if packages:
        return {m.split(".")[0] for m in modules}, proc.stdout
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


def test_stack_list_reads_with_sqlalchemy_core_alone(tmp_path):
    # On a current SQLite database, with the URL from the environment:
    # no ORM, oslo.db or oslo.config (0.2 s of CPU of 0.5, issue 23).
    loaded(tmp_path, "stack", "create", "s1", "-t", TEMPLATE, "--wait")
    modules, out = loaded(tmp_path, "stack", "list", "-f", "value", "-c", "name",
                          packages=False)
    assert out.split() == ["s1"]
    heavy = {m for m in modules if m.split(".")[0] in ("oslo_db", "oslo_config")
             or m.startswith("sqlalchemy.orm") or m == "nestedflow.db.models"
             or m == "nestedflow.engine.service"}
    assert not heavy, sorted(heavy)


def test_conductor_listing_imports_no_taskflow():
    # ``nestedflow conductor list`` reads ZooKeeper with kazoo alone.
    proc = subprocess.run([sys.executable, "-c", "import sys, nestedflow.conductor.listing; "
                           "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                          text=True, capture_output=True, timeout=60, check=True)
    assert not set(proc.stdout.split()) & {"taskflow", "sqlalchemy", "oslo_messaging"}


def test_a_create_does_not_import_eventlets_green_resolver(tmp_path):
    """TaskFlow imports eventlet (through oslo_utils.eventletutils), and
    eventlet imports dnspython for its green resolver unless
    EVENTLET_NO_GREENDNS is set: 0.2 s of CPU in every command that runs a
    stack. Importing nestedflow sets it (nestedflow/__init__.py)."""
    tmpl = tmp_path / "one.yaml"
    tmpl.write_text("heat_template_version: 2018-08-31\n"
                    "resources:\n  x:\n    type: OS::Heat::None\n")
    modules, _ = loaded(tmp_path, "stack", "create", "one", "-t", str(tmpl), "--wait",
                        packages=False)
    assert "taskflow.engines" in modules and "eventlet" in modules
    assert "eventlet.support.greendns" not in modules and "dns.resolver" not in modules


def test_a_create_on_a_current_database_does_not_import_alembic(tmp_path):
    """alembic (and Mako) only upgrade schemas: TaskFlow's SQL backend
    imports its migration module, now a lazy one, and nestedflow's own
    check that the database is current reads the version table itself."""
    tmpl = tmp_path / "one.yaml"
    tmpl.write_text("heat_template_version: 2018-08-31\n"
                    "resources:\n  x:\n    type: OS::Heat::None\n")
    loaded(tmp_path, "stack", "create", "first", "-t", str(tmpl), "--wait")  # the schema
    modules, _ = loaded(tmp_path, "stack", "create", "two", "-t", str(tmpl), "--wait")
    assert "taskflow" in modules and "alembic" not in modules and "mako" not in modules


def test_importing_nestedflow_sets_no_greendns_unless_set():
    code = ("import os; os.environ['EVENTLET_NO_GREENDNS'] = 'no'; import nestedflow; "
            "print(os.environ['EVENTLET_NO_GREENDNS'])")
    kept = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                          timeout=60, check=True)
    fresh = subprocess.run([sys.executable, "-c", "import os, nestedflow; "
                            "print(os.environ['EVENTLET_NO_GREENDNS'])"],
                           env={"PATH": "/usr/bin:/bin"}, text=True, capture_output=True,
                           timeout=60, check=True)
    assert (kept.stdout.strip(), fresh.stdout.strip()) == ("no", "yes")
