"""What the command line says when an operator gets something wrong, or
when nothing is wrong at all: one clear line on stderr, no stray warnings,
and an answer a script can trust on stdout (issue: CLI parity, "small
things a new user met"). Every case runs the real ``nestedflow`` console
script against real servers."""

import os
import shutil
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa

from tests.conftest import PG_URL

EXE = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"


def run(args, env, cwd=None):
    proc = subprocess.run([EXE, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.fixture
def env(tmp_path):
    env = dict(os.environ, NESTEDFLOW_DB_URL=f"sqlite:///{tmp_path}/cli.sqlite",
               XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)
    return env


@pytest.fixture
def empty_pg(fresh_database):
    return fresh_database(PG_URL)


def test_unknown_command_goes_to_stderr_with_suggestions_from_its_group(env):
    # cliff printed its suggestions on stdout, listing every command
    # sharing a word; a script piping stdout took them for an answer.
    proc = run(["stack", "lst"], env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == "nestedflow: 'stack lst' is not a nestedflow command. " \
                       "See 'nestedflow --help'."
    suggestions = [line.strip() for line in lines[2:]]
    assert suggestions[0] == "stack list"
    assert len(suggestions) <= 4
    assert all(s.startswith("stack ") for s in suggestions)


def test_unknown_group_suggests_the_closest_commands(env):
    proc = run(["stak", "list"], env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "  stack list" in proc.stderr.splitlines()


@pytest.mark.parametrize("option", ["-t", "-e"])
def test_a_url_is_refused_saying_why(env, option, tmp_path):
    # heatclient fetches a URL given as -t or -e; nestedflow reaches no network.
    template = tmp_path / "t.yaml"
    template.write_text("heat_template_version: 2018-08-31\n")
    args = ["stack", "create", "x", "-t", "https://example.com/t.yaml"]
    if option == "-e":
        args = ["stack", "create", "x", "-t", str(template), "-e", "https://example.com/e.yaml"]
    proc = run(args, env)
    assert proc.returncode == 1
    what = "template" if option == "-t" else "environment"
    assert proc.stderr == (
        f"ERROR: {what} https://example.com/{what[0]}.yaml refused: nestedflow reads local "
        "files only and fetches nothing over the network; download it and pass the local "
        "path\n")


def test_yaml_errors_name_the_file_and_line(env, tmp_path):
    template = tmp_path / "bad.yaml"
    template.write_text("heat_template_version: 2018-08-31\nresources:\n"
                        "  a: {type: OS::Heat::None\n  b: x\n")
    proc = run(["stack", "create", "x", "-t", str(template)], env)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"ERROR: {template}: line 4, column 4: ")
    assert proc.stderr.count("\n") == 1

    good = tmp_path / "good.yaml"
    good.write_text("heat_template_version: 2018-08-31\n")
    environment = tmp_path / "env.yaml"
    environment.write_text("parameters: [\n")
    proc = run(["stack", "create", "x", "-t", str(good), "-e", str(environment)], env)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"ERROR: {environment}: line 2, column 1: ")
    # Nothing was stored by either refusal.
    assert run(["stack", "list", "-f", "value"], env).stdout == ""


def test_db_sync_says_what_it_did_and_no_warning_on_an_empty_database(env, empty_pg):
    env = dict(env, NESTEDFLOW_DB_URL=empty_pg)
    shown = sa.engine.make_url(empty_pg).render_as_string(hide_password=True)
    # The first command against an empty PostgreSQL database used to log
    # oslo.db's "DBAPIError exception wrapped ... UndefinedTable" warning.
    proc = run(["stack", "list"], env)
    assert proc.returncode == 0 and proc.stderr == ""

    proc = run(["db", "sync"], env)  # stack list created the schema already
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith(f"database at {shown} is up to date (revision ")

    engine = sa.create_engine(empty_pg)
    with engine.begin() as conn:
        for table in sa.inspect(conn).get_table_names():
            conn.exec_driver_sql(f'DROP TABLE "{table}" CASCADE')
    engine.dispose()
    proc = run(["db", "sync"], env)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith(f"created the schema at {shown} (revision ")


def test_a_jobboard_command_ends_without_a_lost_connection_warning(env, tmp_path):
    zk = os.environ.get("NESTEDFLOW_TEST_ZK", "127.0.0.1:2181")
    root = f"nf-cli-{uuid.uuid4().hex[:8]}"
    template = tmp_path / "t.yaml"
    template.write_text("heat_template_version: 2018-08-31\n"
                        "resources:\n  a: {type: OS::Heat::None}\n")
    url = f"zookeeper://{zk}/{root}"
    proc = run(["--jobboard-url", url, "stack", "create", "x", "-t", str(template),
                "-f", "value", "-c", "status"], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "IN_PROGRESS\n"
    # The session the command ends itself is not a lost connection.
    assert proc.stderr == ""
