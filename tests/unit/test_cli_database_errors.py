"""Database URL mistakes at the command line: one ERROR line naming the
cause, exit 1, no traceback (``--debug`` shows it); a missing SQLite
directory is an error, not a new empty database. Runs the real CLI."""

import os
import subprocess
import sys

import pytest

PG = os.environ.get("NESTEDFLOW_TEST_PG_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/test")
MYSQL = os.environ.get("NESTEDFLOW_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test")


def run(*args):
    env = {k: v for k, v in os.environ.items() if k != "NESTEDFLOW_DB_URL"}
    return subprocess.run([sys.executable, "-m", "nestedflow.cmd.shell", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def _base(url):
    return url.rsplit("/", 1)[0]


@pytest.mark.parametrize("url, expected", [
    ("notaurl", "malformed database URL 'notaurl'"),
    ("postgresql+psycopg2://postgres:pw@127.0.0.1:1/test", "port 1 failed: Connection refused"),
    (_base(PG) + "/nestedflow_no_such_db", 'database "nestedflow_no_such_db" does not exist'),
    (_base(MYSQL) + "/nestedflow_no_such_db", "Unknown database 'nestedflow_no_such_db'"),
])
def test_one_line_error(url, expected):
    result = run("--db-url", url, "stack", "list")
    assert result.returncode == 1
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("ERROR: ") and expected in lines[0]
    assert "Traceback" not in result.stderr and ":pw@" not in lines[0]


def test_missing_sqlite_directory_is_an_error(tmp_path):
    path = tmp_path / "missing" / "dir" / "x.sqlite"
    result = run("--db-url", f"sqlite:///{path}", "stack", "list")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"ERROR: cannot use the database sqlite:///{path}: "
        f"directory {path.parent} does not exist")
    assert not (tmp_path / "missing").exists()


def test_debug_shows_the_traceback(tmp_path):
    result = run("--debug", "--db-url", f"sqlite:///{tmp_path}/no/x.sqlite", "stack", "list")
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "DatabaseUnavailable" in result.stderr


def test_rabbitmq_wrong_credentials_one_line_no_payload(tmp_path):
    rabbit = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")
    wrong = "rabbit://nobody:wrong@" + rabbit.split("@", 1)[1]
    template = tmp_path / "t.yaml"
    template.write_text("heat_template_version: 2018-08-31\nparameters:\n"
                        "  pw: {type: string, hidden: true}\n"
                        "resources:\n  a: {type: OS::Heat::None}\n")
    result = run("--db-url", f"sqlite:///{tmp_path}/x.sqlite", "--transport-url", wrong,
                 "stack", "create", "-t", str(template), "--parameter", "pw=TOPSECRETVALUE",
                 "--wait", "s1")
    assert result.returncode == 0, result.stderr  # the stack does not depend on notifications
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith(("ERROR ", "WARNING ")) for line in lines), lines
    assert any("ACCESS_REFUSED" in line for line in lines)
    assert "Traceback" not in result.stderr and "TOPSECRETVALUE" not in result.stderr
    assert "Payload" not in result.stderr
