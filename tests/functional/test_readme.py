"""A newcomer's first ten minutes: the README's commands, read out of the
README by tools/readme_commands.py, in a fresh clone in a fresh directory.

The test command is run with a small subset of the unit tests appended (the
whole suite would run this test again); CI's ``.ci/run`` runs the same
commands with nothing appended, on a machine without ZooKeeper installed.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme(section):
    proc = subprocess.run([sys.executable, "tools/readme_commands.py", section], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return proc.stdout.splitlines()


def test_readme_commands_in_a_fresh_clone(tmp_path):
    clone = tmp_path / "nestedflow"
    subprocess.run(["git", "clone", "--quiet", ROOT, str(clone)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH") and not k.startswith("NESTEDFLOW_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # the example's SQLite file
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    setup, test = readme("setup"), readme("test")
    for command in setup:
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=1200)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "CREATE_COMPLETE" in proc.stdout
    (command,) = test
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c",
                           command + " -q tests/unit/test_template_loader.py"],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout
