"""``nestedflow stack resource signal``, ``stack hook poll|clear`` and
``stack create --pre-create`` / ``stack update --pre-update`` (heatclient's
commands: heatclient/osc/v1/resource.py ResourceSignal, osc/v1/stack.py
StackHookPoll, StackHookClear, template_utils.hooks_to_env), each command
its own engine on one SQLite database, as separate shells would be."""

import contextlib
import io
import json
import subprocess
import sys
import time

import pytest

from nestedflow.cmd import shell

TEMPLATE = """heat_template_version: 2015-04-30
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      timeout: 600
  after:
    type: OS::Heat::TestResource
    depends_on: wait
    properties:
      value: {get_param: value}
parameters:
  value: {type: string, default: one}
outputs:
  data:
    value: {get_attr: [wait, data]}
"""


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("NESTEDFLOW_DB_URL", f"sqlite:///{tmp_path}/cli.sqlite")
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "data.json").write_text('{"data": "from a file", "id": "f"}')
    monkeypatch.chdir(tmp_path)

    def run(*argv, expect=0):
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(list(argv), stdout=out, stderr=err)
        # expect None: polling something that may not exist yet.
        assert expect is None or code == expect, out.getvalue() + err.getvalue()
        return out.getvalue() + err.getvalue()

    return run


class _Background:
    """A command in a process of its own, as another shell runs it.

    Not a thread: ``shell.main`` is one process's command line (oslo.config's
    global options), and a second command started beside the polling ones
    in a thread of the same process could end at once without a word -- the
    update below then never began (seen once in four runs)."""

    def __init__(self, *argv):
        self._process = subprocess.Popen(
            [sys.executable, "-m", "nestedflow.cmd.shell", *argv],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = ""

    def join(self, timeout):
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.output = self._process.communicate(timeout=timeout)[0]
        assert self._process.returncode in (None, 0), self.output

    def is_alive(self):
        return self._process.poll() is None


def _until(predicate, timeout=120.0, explain=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time" + (f"; {explain()}" if explain else ""))


def _state(cli):
    """What the stack shows now: for a failure's message."""
    return "\n".join(cli(*argv, expect=None) for argv in (
        ("stack", "show", "s1", "-f", "value", "-c", "stack_status",
         "-c", "stack_status_reason"),
        ("stack", "resource", "list", "s1", "-f", "value"),
        ("stack", "event", "list", "s1", "-f", "value")))


def test_signal_hooks_and_wait_condition_from_the_command_line(cli):
    cli("db", "sync")  # before two shells open the new database at once
    creating = _Background("stack", "create", "s1", "-t", "t.yaml", "--pre-create",
                           "after", "--wait")
    # The wait condition takes its signal from the command line; the
    # curl_cli prefix's --data-binary works as heat's curl would.
    _until(lambda: "wait CREATE IN_PROGRESS" in cli(
        "stack", "resource", "list", "s1", "-f", "value", "-c", "name", "-c", "action",
        "-c", "status", expect=None))
    cli("stack", "resource", "signal", "s1", "handle", "--data-binary",
        '{"status": "SUCCESS", "data": "cli", "id": "c"}')
    cli("stack", "resource", "signal", "s1", "handle", "--data-file", "data.json")
    bad = cli("stack", "resource", "signal", "s1", "handle", "--data", "{not json",
              expect=1)
    assert "data should be in JSON format" in bad
    refused = cli("stack", "resource", "signal", "s1", "wait", expect=1)
    assert "signal is not supported for resource wait" in refused
    # Then "after" reaches its pre-create hook: poll lists it, clear releases it.
    _until(lambda: "after" in cli("stack", "hook", "poll", "s1", "-f", "value", expect=None),
           explain=lambda: _state(cli))
    cli("stack", "hook", "clear", "s1", "after")
    creating.join(120)
    assert not creating.is_alive()
    shown = cli("stack", "show", "s1", "-f", "json")
    assert json.loads(shown)["stack_status"] == "CREATE_COMPLETE" or (
        "CREATE_COMPLETE" in shown)
    assert cli("stack", "hook", "poll", "s1", expect=1)  # not IN_PROGRESS any more

    updating = _Background("stack", "update", "s1", "-t", "t.yaml", "-P", "value=two",
                           "--pre-update", "after", "--wait")
    _until(lambda: "after" in cli("stack", "hook", "poll", "s1", "-f", "value", expect=None),
           explain=lambda: _state(cli))
    cli("stack", "hook", "clear", "--pre-update", "s1", "after")
    updating.join(120)
    assert not updating.is_alive()
    assert "UPDATE_COMPLETE" in cli("stack", "show", "s1", "-f", "json")
