"""The ``nestedflow`` command through a resident ``nestedflow-engine``.

A real engine process (RabbitMQ for its RPC API, a local socket for the
command line) on a real SQLite file; the real console script in fresh
processes. The command's answers must be the embedded engine's.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
from oslo_context import context as oslo_context

from nestedflow import exceptions
from nestedflow.rpc.resident_client import ResidentClient
from tests.functional.engine_services import ROOT, EngineServices

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  plain: {type: OS::Heat::None}
  value:
    type: OS::Heat::TestResource
    properties: {value: hello}
outputs:
  said: {value: {get_attr: [value, output]}}
"""
#: Modules the command must not import when a resident engine serves it
#: (oslo.config is still imported: the template loader reads its limits).
HEAVY = ("sqlalchemy", "taskflow", "oslo_messaging", "eventlet", "networkx", "kombu")


@pytest.fixture
def workdir():
    # Not tmp_path: a Unix socket's path must stay under 108 bytes.
    path = tempfile.mkdtemp(prefix="nf-resident-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def resident(workdir, tmp_path):
    db_url = f"sqlite:///{workdir}/engine.sqlite"
    sock = os.path.join(workdir, "engine.sock")
    services = EngineServices(db_url, tmp_path, count=1, extra=["--socket", sock])
    try:
        deadline = time.monotonic() + 60
        while "resident engine listening" not in services.output("engine0"):
            assert time.monotonic() < deadline, services.output("engine0")
            time.sleep(0.1)
        services.socket, services.workdir = sock, workdir
        yield services
    finally:
        services.close()
    assert not os.path.exists(sock), "the engine removes its socket when it stops"


def _cli(db_url, sock, *args, engine="auto", expect=0, importtime=False):
    exe = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"
    env = dict(os.environ, NESTEDFLOW_DB_URL=db_url, NESTEDFLOW_ENGINE=engine,
               NESTEDFLOW_ENGINE_SOCKET=sock, COLUMNS="200")
    if importtime:
        env["PYTHONPROFILEIMPORTTIME"] = "1"
    proc = subprocess.run([exe, "-v", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == expect, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def _imported(stderr):
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def _template(workdir, text=TEMPLATE):
    path = os.path.join(workdir, "stack.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def test_create_show_list_delete_through_the_resident_engine(resident):
    db, sock = resident.db_url, resident.socket
    template = _template(resident.workdir)
    created = _cli(db, sock, "stack", "create", "web", "-t", template, "--wait", "-f", "json",
                   importtime=True)
    assert "resident engine at " + sock in created.stderr
    heavy = {m for m in _imported(created.stderr) if m.split(".")[0] in HEAVY}
    assert heavy == set()
    stack = json.loads(created.stdout)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert stack["outputs"] == {"said": "hello"}
    assert "web" in _cli(db, sock, "stack", "list").stdout
    resources = json.loads(_cli(db, sock, "stack", "resource", "list", "web", "-f",
                                "json").stdout)
    assert {r["resource_name"] for r in resources} == {"plain", "value"}

    # What the resident engine answers is what an embedded engine answers.
    for args in (("stack", "show", "web", "-f", "json"),
                 ("stack", "resource", "list", "web", "-f", "json"),
                 ("stack", "event", "list", "web", "-f", "json"),
                 ("stack", "output", "show", "web", "--all", "-f", "json"),
                 ("stack", "list", "-f", "json")):
        through = _cli(db, sock, *args)
        assert "resident engine at" in through.stderr
        embedded = _cli(db, sock, *args, engine="embedded")
        assert "resident engine" not in embedded.stderr
        assert json.loads(through.stdout) == json.loads(embedded.stdout), args

    # The engine deploys it: without --wait the command does not stay.
    quick = _cli(db, sock, "stack", "create", "quick", "-t", template, "-f", "value",
                 "-c", "stack_status")
    assert quick.stdout in ("CREATE_IN_PROGRESS\n", "CREATE_COMPLETE\n")
    assert "running in-process" not in quick.stderr
    with ResidentClient.connect(sock, db) as client:
        assert client.wait("quick").status == "COMPLETE"

    deleted = _cli(db, sock, "stack", "delete", "web", "--yes", "--wait")
    assert "resident engine at" in deleted.stderr
    assert "web" not in _cli(db, sock, "stack", "list").stdout


def test_errors_are_the_embedded_engines(resident):
    db, sock = resident.db_url, resident.socket
    bad = _template(resident.workdir, TEMPLATE.replace("OS::Heat::None", "OS::No::Such"))
    cases = (("stack", "show", "nowhere"),
             ("stack", "create", "bad", "-t", bad, "--wait"),
             ("stack", "delete", "nowhere", "--yes"))
    for args in cases:
        through = _cli(db, sock, *args, expect=1)
        assert "resident engine at" in through.stderr
        embedded = _cli(db, sock, *args, engine="embedded", expect=1)
        last = [line for line in through.stderr.splitlines() if not line.startswith("20")]
        assert last == [line for line in embedded.stderr.splitlines()
                        if not line.startswith("20")], args
        assert through.stdout == embedded.stdout


def test_a_failed_stack_exits_1_as_embedded(resident):
    db, sock = resident.db_url, resident.socket
    failing = _template(resident.workdir, TEMPLATE.replace("{value: hello}",
                                                           "{value: hello, fail: true}"))
    through = _cli(db, sock, "stack", "create", "f1", "-t", failing, "--wait",
                   "-f", "value", "-c", "stack_status", expect=1)
    embedded = _cli(db, sock, "stack", "create", "f2", "-t", failing, "--wait",
                    "-f", "value", "-c", "stack_status", engine="embedded", expect=1)
    assert "resident engine at" in through.stderr
    assert through.stdout == embedded.stdout == "CREATE_FAILED\n"
    assert "ERROR: Stack f1 CREATE_FAILED" in through.stderr


def test_fallback_to_the_embedded_engine_when_none_runs(workdir):
    db = f"sqlite:///{workdir}/alone.sqlite"
    sock = os.path.join(workdir, "engine.sock")  # nobody listens
    created = _cli(db, sock, "stack", "create", "solo", "-t", _template(workdir), "--wait",
                   "-f", "value", "-c", "stack_status")
    assert created.stdout == "CREATE_COMPLETE\n"
    assert f"no resident engine at {sock}: none runs; using an engine in this process" \
        in created.stderr
    refused = _cli(db, sock, "stack", "list", engine="remote", expect=1)
    assert refused.stderr.splitlines()[-1] == \
        f"ERROR: no resident engine at {sock}: none runs"


def test_an_engine_serving_another_database_is_not_used(resident):
    other = f"sqlite:///{resident.workdir}/other.sqlite"
    created = _cli(other, resident.socket, "stack", "create", "elsewhere", "-t",
                   _template(resident.workdir), "--wait")
    assert "serves another database; using an engine in this process" in created.stderr
    assert "elsewhere" not in _cli(resident.db_url, resident.socket, "stack", "list").stdout
    refused = _cli(other, resident.socket, "stack", "list", engine="remote", expect=1)
    assert refused.stderr.splitlines()[-1] == (
        f"ERROR: no resident engine at {resident.socket}: it serves another database")


def test_context_reaches_the_resident_engine(resident):
    mine = oslo_context.RequestContext(project_id="project-a", user_id="u")
    theirs = oslo_context.RequestContext(project_id="project-b", user_id="v")
    with ResidentClient.connect(resident.socket, resident.db_url) as client:
        started = client.create_stack("owned", TEMPLATE, context=mine)
        final = client.wait(started.id, context=mine)
        assert (final.status, final.project_id) == ("COMPLETE", "project-a")
        assert [s.name for s in client.list_stacks(context=mine)] == ["owned"]
        assert client.list_stacks(context=theirs) == []
        with pytest.raises(exceptions.StackNotFound):
            client.get_stack(started.id, context=theirs)
        assert not hasattr(client, "close_engine")  # only the engine API's methods


def test_a_second_engine_leaves_the_socket_to_the_first(resident):
    second = subprocess.run(
        [sys.executable, "-m", "nestedflow.cmd.engine", "--db-url", resident.db_url,
         "--socket", resident.socket, "--transport-url", "fake://"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert second.returncode == 1, second.stderr
    assert "is served by another engine" in second.stdout + second.stderr
    with ResidentClient.connect(resident.socket, resident.db_url) as client:
        assert client.list_stacks() == []
