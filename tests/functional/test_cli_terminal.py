"""The command line in a real pseudo-terminal (tmux), as an operator sees
it: ``stack create --wait`` draws live progress, ``stack event list
--follow`` prints events as they happen, and Ctrl-C in either ends only the
watching -- the conductor carries the stack on -- and says how to follow it
again."""

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.functional.conductor_cluster import wait_for

EXE = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"

SLOW = """\
heat_template_version: 2018-08-31
resources:
{resources}
"""


@pytest.fixture
def cluster_db_url(pg_url):
    return pg_url


class Terminal:
    """One tmux session of its own, 120x40, running a shell (tools/test.sh
    installs Debian's tmux when it is missing)."""

    def __init__(self, env):
        self.name = f"nf-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", "120", "-y", "40",
                        f"env {exports} bash --norc --noprofile"], check=True)

    def type(self, text):
        subprocess.run(["tmux", "send-keys", "-t", self.name, text, "Enter"], check=True)

    def interrupt(self):
        subprocess.run(["tmux", "send-keys", "-t", self.name, "C-c"], check=True)

    def screen(self):
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name, "-S", "-200"],
                              check=True, capture_output=True, text=True).stdout

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False)


@pytest.fixture
def terminal(cluster, tmp_path):
    env = {"NESTEDFLOW_DB_URL": cluster.db_url, "NESTEDFLOW_JOBBOARD_URL": cluster.jobboard_url,
           "PATH": os.path.dirname(sys.executable) + ":" + os.environ["PATH"],
           "TERM": "xterm-256color", "HOME": str(tmp_path), "PS1": "$ "}
    term = Terminal(env)
    yield term
    term.close()


def test_create_wait_draws_progress_and_ctrl_c_leaves_the_stack_running(
        cluster, terminal, tmp_path):
    cluster.start("c1", job_slots=2, workers=4)
    template = tmp_path / "slow.yaml"
    template.write_text(SLOW.format(resources="\n".join(
        f"  r{i}: {{type: OS::Heat::TestResource, properties: {{wait_secs: 3}}}}"
        for i in range(6))))
    terminal.type(f"{EXE} stack create slow -t {template} --wait")
    # The live display (rich, on the terminal's stderr) counts resources.
    screen = wait_for(lambda: (s := terminal.screen()) and "/6" in s and s, timeout=90,
                      interval=0.2, what="the progress display")
    assert "slow" in screen
    terminal.interrupt()
    screen = wait_for(lambda: (s := terminal.screen()) and "Interrupted" in s and s,
                      timeout=30, what="the interrupt message")
    assert ("Interrupted; stack slow carries on. Follow it again with: nestedflow stack "
            "event list slow --follow") in screen.replace("\n", "")
    assert "Traceback" not in screen
    # The conductor finishes it: Ctrl-C stopped the watching only.
    engine = cluster.engine()
    stack = engine.wait(engine.get_stack("slow").id, timeout=120)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")


def test_event_list_follow_prints_events_as_they_happen(cluster, terminal, tmp_path):
    cluster.start("c1", job_slots=2, workers=2)
    template = tmp_path / "chain.yaml"
    # A chain: one resource completes every two seconds.
    lines = []
    for i in range(4):
        depends = f", depends_on: r{i - 1}" if i else ""
        lines.append(f"  r{i}: {{type: OS::Heat::TestResource, "
                     f"properties: {{wait_secs: 2}}{depends}}}")
    template.write_text(SLOW.format(resources="\n".join(lines)))
    created = subprocess.run(
        [EXE, "stack", "create", "chain", "-t", str(template), "-f", "value", "-c", "id"],
        env=dict(os.environ, NESTEDFLOW_DB_URL=cluster.db_url,
                 NESTEDFLOW_JOBBOARD_URL=cluster.jobboard_url),
        capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    terminal.type(f"{EXE} stack event list chain --follow")
    # heatclient's log lines, appearing while the chain runs.
    wait_for(lambda: "[r0]: CREATE_COMPLETE" in terminal.screen(), timeout=90,
             what="r0's completion")
    assert "[r3]: CREATE_COMPLETE" not in terminal.screen()
    wait_for(lambda: "[r3]: CREATE_COMPLETE" in terminal.screen(), timeout=90,
             what="r3's completion, followed live")
    wait_for(lambda: "[chain]: CREATE_COMPLETE" in terminal.screen(), timeout=60,
             what="the stack event")
    time.sleep(1.5)
    terminal.interrupt()
    screen = wait_for(lambda: (s := terminal.screen()) and "Interrupted" in s and s,
                      timeout=30, what="the interrupt message")
    assert "Follow it again with: nestedflow stack event list chain --follow" in \
        screen.replace("\n", "")
    assert "Traceback" not in screen
    # Each event was printed once.
    assert screen.count("[r1]: CREATE_COMPLETE") == 1
