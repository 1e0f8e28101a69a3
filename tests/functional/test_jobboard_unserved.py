"""A jobboard that is down or that no conductor serves.

* ZooKeeper down: a create whose job cannot be posted stores nothing a
  retry would trip over -- the same name works once ZooKeeper answers.
* No conductor: ``stack create --wait`` says within seconds that no live
  conductor is registered and nothing has claimed the job (exit 1), and
  waits on only with ``--keep-waiting``.
"""

import os
import subprocess
import sys
import time
import uuid

import pytest

import nestedflow
from nestedflow import exceptions

ZK = os.environ.get("NESTEDFLOW_TEST_ZK", "127.0.0.1:2181")
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::None"}}}


def test_a_create_zookeeper_refused_leaves_nothing_behind(shared_db_url, stack_name):
    down = f"zookeeper://127.0.0.1:1/nftest-{uuid.uuid4().hex[:8]}"  # nothing listens
    with nestedflow.Engine(db_url=shared_db_url, jobboard_url=down) as engine:
        for _ in range(2):  # a retry with the same name fails the same way
            with pytest.raises(exceptions.NestedflowError, match="could not be posted"):
                engine.create_stack(stack_name, TEMPLATE)
        assert stack_name not in [s.name for s in engine.list_stacks()]
    up = f"zookeeper://{ZK}/nftest-{uuid.uuid4().hex[:8]}"
    with nestedflow.Engine(db_url=shared_db_url, jobboard_url=up) as engine:
        stack = engine.create_stack(stack_name, TEMPLATE)  # no StackExists
        assert engine.get_stack(stack.id).status == "IN_PROGRESS"


def _cli(db_url, jobboard_url, *args, timeout=60):
    env = dict(os.environ, NESTEDFLOW_DB_URL=db_url, NESTEDFLOW_JOBBOARD_URL=jobboard_url)
    return subprocess.run([sys.executable, "-m", "nestedflow.cmd.shell", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_wait_with_no_conductor_says_so(pg_url, stack_name, tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text("heat_template_version: 2018-08-31\n"
                        "resources:\n  a: {type: OS::Heat::None}\n")
    board = f"zookeeper://{ZK}/nftest-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    proc = _cli(pg_url, board, "stack", "create", stack_name, "-t", str(template), "--wait")
    took = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no live conductor" in proc.stderr and "nothing has claimed" in proc.stderr, (
        proc.stderr)
    assert "--keep-waiting" in proc.stderr
    assert took < 45, took  # the notice comes after seconds, not never

    # Asked to keep waiting, it says so once and goes on (until its timeout here).
    with pytest.raises(subprocess.TimeoutExpired) as waited:
        _cli(pg_url, board, "stack", "create", f"{stack_name}-2", "-t", str(template),
             "--wait", "--keep-waiting", timeout=20)
    assert b"no live conductor" in (waited.value.stderr or b"")
