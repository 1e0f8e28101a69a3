"""Heat's own heat-api (unmodified, openstack-heat 27.0.1 from the peer
virtualenv ``tools/heat-peer.sh`` installs) in front of a ``nestedflow-engine``
serving Heat's engine RPC API, on RabbitMQ.

Each group gets its own RabbitMQ virtual host and its own port, so test
sessions sharing the broker and the machine never answer each other's
calls: heat-api always calls topic ``engine`` (heat/rpc/api.py), and the
rabbit driver names a topic's queue after the topic alone, so two engines
on different exchanges would still share the queue ``engine``.
"""

import contextlib
import functools
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from tests.functional.engine_services import ROOT, TRANSPORT_URL, EngineServices


@functools.cache
def peer_venv():
    """The peer virtualenv (installed on first use: a fresh CI machine)."""
    result = subprocess.run([os.path.join(ROOT, "tools", "heat-peer.sh")], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise AssertionError(f"tools/heat-peer.sh failed:\n{result.stderr[-4000:]}")
    return result.stdout.strip().splitlines()[-1]


def peer_site_packages():
    venv = peer_venv()
    out = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                          "import heat_tempest_plugin, os; "
                          "print(os.path.dirname(os.path.dirname(heat_tempest_plugin.__file__)))"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _rabbitmqctl(*args):
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


class VirtualHost:
    """A RabbitMQ virtual host of its own (``rabbitmqctl``: the broker runs
    on this machine, in CI too); deleted by close()."""

    def __init__(self, name):
        self.name = name
        _rabbitmqctl("add_vhost", name)
        _rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
        base = urllib.parse.urlsplit(TRANSPORT_URL)
        self.url = urllib.parse.urlunsplit(base._replace(path="/" + name))

    def close(self):
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            _rabbitmqctl("delete_vhost", self.name)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HeatApi:
    """heat-api on a free local port, ``nestedflow-engine`` behind it (its
    traversals in-process, or posted to ``jobboard_url`` for conductors)."""

    def __init__(self, db_url, tmp_path, jobboard_url=None):
        self.venv = peer_venv()
        self.tmp_path = tmp_path
        self.exchange = f"nftest-heat-{uuid.uuid4().hex[:12]}"
        self.vhost = VirtualHost(self.exchange)
        conf = tmp_path / f"{self.exchange}.conf"
        conf.write_text(f"[heat_engine]\nenabled = true\nexchange = {self.exchange}\n"
                        f"host = {self.exchange}\n")
        extra = ["--config-file", str(conf)]
        if jobboard_url:
            extra += ["--jobboard-url", jobboard_url]
        self.port = free_port()
        self.workdir = tmp_path / f"{self.exchange}-api"
        self.engines = EngineServices(db_url, tmp_path, count=1, extra=tuple(extra),
                                      transport_url=self.vhost.url)
        try:
            env = dict(os.environ, NESTEDFLOW_HEAT_VENV=self.venv)
            self._out = open(tmp_path / f"{self.exchange}-api.out", "ab")  # noqa: SIM115
            self.api = subprocess.Popen(
                [os.path.join(ROOT, "tools", "heat-api.sh"), "--port", str(self.port),
                 "--exchange", self.exchange, "--transport-url", self.vhost.url,
                 "--workdir", str(self.workdir)],
                stdout=self._out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
            self._wait_answering()
        except BaseException:
            self.close()
            raise

    def _wait_answering(self, timeout=120):
        deadline = time.monotonic() + timeout
        while True:
            if self.api.poll() is not None:
                raise AssertionError(f"heat-api exited:\n{self.log()}")
            with contextlib.suppress(OSError):
                status, _ = self.request("GET", "/stacks")
                if status == 200:
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"heat-api not answering:\n{self.log()}")
            time.sleep(0.3)

    def log(self):
        text = ""
        for path in (self.tmp_path / f"{self.exchange}-api.out", self.workdir / "heat-api.log"):
            with contextlib.suppress(FileNotFoundError):
                text += path.read_text()[-6000:]
        return text + "\n---- engine ----\n" + self.engines.output("engine0")[-6000:]

    def url(self, project="admin"):
        return f"http://127.0.0.1:{self.port}/v1/{project}"

    def request(self, method, path, body=None, project="admin", timeout=90, follow=False):
        """(status, decoded JSON body or text) of a REST call as ``project``
        (heat-api's noauth takes it from ``X-Auth-Project``); redirects
        are followed only if ``follow``."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url(project) + path, data=data, method=method,
            headers={"Content-Type": "application/json", "X-Auth-Project": project,
                     "X-Auth-User": f"{project}-user"})
        opener = urllib.request.build_opener(*(() if follow else (_NoRedirect,)))
        try:
            with opener.open(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def stack(self, name, project="admin"):
        status, body = self.request("GET", f"/stacks/{name}", project=project, follow=True)
        assert status == 200, body
        return body["stack"]

    def wait_settled(self, name, timeout=180, project="admin"):
        """The stack once it is no longer IN_PROGRESS (for commands with no --wait)."""
        deadline = time.monotonic() + timeout
        while True:
            stack = self.stack(name, project)
            if not stack["stack_status"].endswith("IN_PROGRESS"):
                return stack
            if time.monotonic() > deadline:
                raise AssertionError(f"stack {name} still {stack['stack_status']}")
            time.sleep(0.5)

    def openstack(self, *args, check=True, timeout=300):
        """The peer's ``openstack`` command line against heat-api (auth type none)."""
        cmd = [os.path.join(self.venv, "bin", "openstack"), "--os-auth-type", "none",
               "--os-endpoint", self.url(), *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                cwd=self.tmp_path, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}\n{result.stderr}\n{self.log()}")
        return result

    def openstack_json(self, *args):
        return json.loads(self.openstack(*args, "-f", "json").stdout)

    def close(self):
        api = getattr(self, "api", None)
        if api is not None and api.poll() is None:
            api.terminate()
            try:
                api.wait(30)
            except subprocess.TimeoutExpired:
                api.kill()
                api.wait(10)
        if getattr(self, "_out", None) is not None:
            self._out.close()
        if getattr(self, "engines", None) is not None:
            self.engines.close()
        self.vhost.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
