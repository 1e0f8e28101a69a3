"""examples/host_engine runs (the embedding issue): the example host's own
RPC API over nestedflow embedded in-process, then over a remote engine
service through EngineClient, on the real RabbitMQ."""

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "host_engine")
RABBIT = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")


def _start(script, ready, *args, log):
    process = subprocess.Popen([sys.executable, os.path.join(EXAMPLE, script),
                                "--transport-url", RABBIT, *args],
                               stdout=open(log, "w"), stderr=subprocess.STDOUT)  # noqa: SIM115
    deadline = time.monotonic() + 60
    while ready not in log.read_text():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return process


def _stop(*processes):
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def _deploy(topic, servers):
    result = subprocess.run(
        [sys.executable, os.path.join(EXAMPLE, "client.py"), f"web-{uuid.uuid4().hex[:6]}",
         str(servers), "--transport-url", RABBIT, "--topic", topic],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["in-process", "remote"])
def test_example_host(mode, tmp_path):
    topic = f"host-{uuid.uuid4().hex[:8]}"
    engine_topic = f"nf-{uuid.uuid4().hex[:8]}"
    db = f"sqlite:///{tmp_path}/host.sqlite"
    processes = []
    try:
        if mode == "remote":
            processes.append(_start("engine_service.py", "engine service ready",
                                    "--db-url", db, "--topic", engine_topic,
                                    log=tmp_path / "engine.log"))
            host_args = ["--engine-topic", engine_topic]
        else:
            host_args = ["--in-process", "--db-url", db]
        processes.append(_start("host.py", "host ready", "--topic", topic, *host_args,
                                log=tmp_path / "host.log"))
        shown = _deploy(topic, 3)
        assert shown["status"] == "CREATE_COMPLETE"
        assert shown["outputs"] == {"status": "ACTIVE"}
        assert len(shown["servers"]) == 3 and all(s.startswith("server-")
                                                  for s in shown["servers"])
    finally:
        _stop(*processes)
