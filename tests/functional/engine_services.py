"""Real ``nestedflow-engine`` processes on RabbitMQ, for the RPC tests.

Every group of services gets its own topic, so test runs sharing the
broker never answer each other's calls.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid

from nestedflow.rpc import EngineClient

TRANSPORT_URL = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class EngineServices:
    """``count`` engine services on one fresh topic and database."""

    def __init__(self, db_url, tmp_path, count=2, extra=(), transport_url=TRANSPORT_URL):
        self.db_url = db_url
        self.transport_url = transport_url
        self.tmp_path = tmp_path
        self.topic = f"nftest-{uuid.uuid4().hex[:12]}"
        self.processes = {}
        self._clients = []
        # The first migrates a fresh database; two at once would race on it.
        self.start("engine0", extra)
        self.wait_listening("engine0")
        for index in range(1, count):
            self.start(f"engine{index}", extra)
        for name in self.processes:
            self.wait_listening(name)

    def start(self, name, extra=()):
        log = self.tmp_path / f"{self.topic}-{name}.log"
        cmd = [sys.executable, "-m", "nestedflow.cmd.engine", "--db-url", self.db_url,
               "--transport-url", self.transport_url, "--topic", self.topic, "--host", name,
               "--log-file", str(log), *extra]
        if "--socket" not in extra:
            # RPC tests: the user's default resident-engine socket is not theirs.
            cmd.append("--no-socket")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("NESTEDFLOW_DB_URL", None)
        with open(self.tmp_path / f"{self.topic}-{name}.out", "ab") as out:
            self.processes[name] = (subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env), log)

    def output(self, name):
        text = ""
        for path in (self.processes[name][1], self.tmp_path / f"{self.topic}-{name}.out"):
            with contextlib.suppress(FileNotFoundError):
                text += path.read_text()
        return text

    def wait_listening(self, name, timeout=60):
        process, _ = self.processes[name]
        deadline = time.monotonic() + timeout
        while "listening on topic" not in self.output(name):
            if process.poll() is not None:
                raise AssertionError(f"engine service {name} exited:\n{self.output(name)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"engine service {name} not listening:\n"
                                     f"{self.output(name)}")
            time.sleep(0.1)

    def client(self, **kwargs):
        client = EngineClient(transport_url=self.transport_url, topic=self.topic, **kwargs)
        self._clients.append(client)
        return client

    def close(self):
        for client in self._clients:
            client.close()
        for process, _ in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in self.processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
