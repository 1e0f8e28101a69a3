"""The README shows a newcomer exactly two set-up commands and one test
command, and .ci/run runs those (read out of README.md)."""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme(section):
    proc = subprocess.run([sys.executable, "tools/readme_commands.py", section], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return proc.stdout.splitlines()


def test_two_setup_commands_and_one_test_command():
    setup = readme("setup")
    assert setup == ["python3 -m venv .venv && .venv/bin/pip install -e '.[test]'",
                     ".venv/bin/nestedflow stack create demo -t examples/webapp.yaml --wait"]
    assert readme("test") == ["tools/test.sh"]


def test_ci_runs_the_readme_commands():
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert "run_readme setup\nrun_readme test\n" in ci
    # No second, hidden set-up step (the ZooKeeper install is tools/test.sh's).
    assert "zookeeper.sh" not in ci


def test_zookeeper_missing_without_root_is_one_line(tmp_path):
    """Neither root nor sudo: one line saying what to run (run as nobody)."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           "NESTEDFLOW_ZK_JAR": str(tmp_path / "missing.jar"),
           "NESTEDFLOW_ZK_PORT": "29181", "NESTEDFLOW_ZK_DIR": str(tmp_path / "zk")}
    # nobody may not be able to read the checkout (a clone under mktemp -d is
    # private to its owner): the script runs from a copy nobody can read.
    shared = tempfile.mkdtemp(prefix="nf-zk-script-", dir="/tmp")
    try:
        os.chmod(shared, 0o755)
        script = shutil.copy(os.path.join(ROOT, "tools", "zookeeper.sh"), shared)
        os.chmod(script, 0o755)
        proc = subprocess.run(["runuser", "-u", "nobody", "--", "bash", script, "ensure"],
                              cwd=shared, env=env, capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "zookeeper.sh: ZooKeeper is not installed and installing it needs root: run "
        "'sudo apt-get install zookeeper' (or, as root, tools/zookeeper.sh install) and "
        "try again")
