"""The cost of Heat's API in front of the engine: a create posted to Heat's
own heat-api (REST, then Heat's engine RPC API to nestedflow-engine) against
the same create on the embedded Engine, and the latency of heat-api's stack
show and stack list with many stacks stored, in one run.

    python -m bench.heat_api [--resources 1000] [--stacks 1000] [--calls 300]
                             [--list-calls 30] [--runs 5] [--poll 0.1]
                             [--db-url URL] [--transport-url rabbit://...]

Installs (or finds) the peer virtualenv (tools/heat-peer.sh), starts a
``nestedflow-engine`` with ``[heat_engine] enabled`` on the same database as
the embedded engine and heat-api (tools/heat-api.sh) on a free port, both on
a RabbitMQ virtual host of their own when ``rabbitmqctl`` can make one. For
each of ``--runs``: creates a stack of ``--resources`` ``OS::Heat::None`` on
the embedded Engine and waits for it, and the same through heat-api twice:

* **woken**: POST, then ``GET /v1/{project}/stacks/{name}/{id}`` at once
  and again each time the engine announces that the stack changed (the
  notification every nestedflow process listens to, topic
  ``nestedflow_stack_events``: a parent resource waits on it for its nested
  stack, an engine for stacks its conductors run), until heat-api shows it
  settled. The embedded Engine's ``wait`` is woken by the same event in its
  own process, so the two sides are timed alike; every state read still
  goes through heat-api. This is the overhead ratio.
* **polled**: POST, then the same GET every ``--poll`` seconds, as a Heat
  client with no notifications does: it adds up to one interval to what it
  measures (half of one on average).

Then it stores ``--stacks`` small stacks in heat-api's project and times
``GET /v1/{project}/stacks/{name}/{id}`` and ``GET /v1/{project}/stacks``.
"""

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = "admin"


def _template(n):
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(n)}}


def _vhost(transport_url, name):
    """``transport_url`` on a virtual host of its own (None: rabbitmqctl missing)."""
    try:
        for args in (["add_vhost", name], ["set_permissions", "-p", name, "guest", ".*",
                                            ".*", ".*"]):
            subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True,
                           timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = urllib.parse.urlsplit(transport_url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def _wait_for(predicate, what, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start")
        time.sleep(0.2)


def _request(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def _timed(fn, calls):
    latencies = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    return (statistics.median(latencies) * 1000,
            latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000)


class _Peers:
    """nestedflow-engine serving Heat's RPC API, and heat-api in front of it."""

    def __init__(self, db_url, transport_url, tmp):
        self.name = f"bench-heat-{uuid.uuid4().hex[:8]}"
        self.vhost_url = _vhost(transport_url, self.name)
        url = self.vhost_url or transport_url
        conf = os.path.join(tmp, "engine.conf")
        with open(conf, "w") as f:
            f.write(f"[heat_engine]\nenabled = true\nexchange = {self.name}\n")
        log = os.path.join(tmp, "engine.log")
        self.engine = subprocess.Popen(
            [sys.executable, "-m", "nestedflow.cmd.engine", "--config-file", conf,
             "--db-url", db_url, "--transport-url", url, "--topic", self.name,
             "--host", "bench", "--log-file", log, "--no-socket"], cwd=REPO_ROOT)
        _wait_for(lambda: os.path.exists(log) and "Heat engine RPC API" in open(log).read(),
                  f"nestedflow-engine (see {log})")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.api = subprocess.Popen(
            [os.path.join(REPO_ROOT, "tools", "heat-api.sh"), "--port", str(port),
             "--exchange", self.name, "--transport-url", url,
             "--workdir", os.path.join(tmp, "heat-api")],
            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}/v1/{PROJECT}"

        def answering():
            with contextlib.suppress(OSError):
                return _request(self.base, "GET", "/stacks?limit=1")[0] == 200
            return False

        _wait_for(answering, "heat-api")

    def close(self):
        for process in (self.api, self.engine):
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(60)
        if self.vhost_url:
            subprocess.run(["rabbitmqctl", "-q", "delete_vhost", self.name],
                           capture_output=True, check=False)


def _create_rest(base, n, events=None, poll=0.1):
    """Seconds from the POST until heat-api shows the stack settled, and
    its path; looking again on ``events`` (StackEvents), or every ``poll``."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    status, body = _request(base, "POST", "/stacks", {"stack_name": name,
                                                      "template": _template(n)})
    if status != 201:
        raise SystemExit(f"heat-api create answered {status}: {body}")
    stack_id = body["stack"]["id"]
    path = f"/stacks/{name}/{stack_id}"
    shown = {}

    def settled():
        shown.update(_request(base, "GET", path)[1]["stack"])
        return not shown["stack_status"].endswith("IN_PROGRESS")

    if events is None:
        while not settled():
            time.sleep(poll)
    elif not events.wait(stack_id, settled, timeout=600):
        raise SystemExit(f"stack {name} did not settle")
    elapsed = time.perf_counter() - started
    if shown["stack_status"] != "CREATE_COMPLETE":
        raise SystemExit(f"create failed: {shown['stack_status_reason']}")
    return elapsed, path


def _create_embedded(engine, n, context=None):
    started = time.perf_counter()
    stack = engine.create_stack(f"bench-{uuid.uuid4().hex[:8]}", _template(n),
                                context=context)
    done = engine.wait(stack.id, timeout=600)
    if done.stack_status != "CREATE_COMPLETE":
        raise SystemExit(f"create failed: {done.status_reason}")
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.heat_api",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--stacks", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--list-calls", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--poll", type=float, default=0.1,
                        help="seconds between GETs of the polled create")
    parser.add_argument("--db-url", help="default: a fresh SQLite file")
    parser.add_argument("--transport-url", default=os.environ.get(
        "NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/"))
    args = parser.parse_args(argv)

    subprocess.run([os.path.join(REPO_ROOT, "tools", "heat-peer.sh")], check=True,
                   stdout=subprocess.DEVNULL)
    from oslo_context import context as oslo_context

    import nestedflow
    from nestedflow.messaging.events import StackEvents

    tmp = tempfile.mkdtemp(prefix="nf-bench-heat-api-")
    db_url = args.db_url or f"sqlite:///{tmp}/bench.sqlite"
    embedded = nestedflow.Engine(db_url=db_url)  # migrates before the service starts
    peers = _Peers(db_url, args.transport_url, tmp)
    # Its listener's queue exists before the first POST: no announcement
    # is missed.
    events = StackEvents(peers.vhost_url or args.transport_url)
    events.start()
    # heat-api's project, as its noauth context names it.
    project = oslo_context.RequestContext(project_id=PROJECT, user_id="bench",
                                          is_admin=False, overwrite=False)
    try:
        _create_embedded(embedded, 10)  # warm-up, every path
        _create_rest(peers.base, 10, events)
        _create_rest(peers.base, 10, poll=args.poll)
        local, woken, polled, path = [], [], [], None
        for _ in range(args.runs):
            local.append(_create_embedded(embedded, args.resources))
            elapsed, path = _create_rest(peers.base, args.resources, events)
            woken.append(elapsed)
            polled.append(_create_rest(peers.base, args.resources, poll=args.poll)[0])
        stored = [embedded.create_stack(f"many-{i}-{uuid.uuid4().hex[:6]}", _template(1),
                                        context=project) for i in range(args.stacks)]
        for stack in stored:
            embedded.wait(stack.id, timeout=600)
        show = _timed(lambda: _request(peers.base, "GET", path), args.calls)
        listed = _timed(lambda: _request(peers.base, "GET", "/stacks"), args.list_calls)
        count = len(_request(peers.base, "GET", "/stacks")[1]["stacks"])
    finally:
        events.close()
        peers.close()
        embedded.close()
    print(f"create of {args.resources} OS::Heat::None ({args.runs} runs, median; the "
          f"ratio is the median of each run's against that run's embedded create, "
          f"then the range):")
    print(f"  embedded Engine                        {statistics.median(local):8.3f} s")
    for label, times in (("heat-api REST, woken (the overhead)", woken),
                         (f"heat-api REST, polled every {args.poll:g} s", polled)):
        # Paired: a run's two creates are seconds apart, so a slow spell of
        # a shared machine weighs on both sides of its ratio alike.
        ratios = sorted(rest / embedded for rest, embedded in zip(times, local, strict=True))
        print(f"  {label:<38} {statistics.median(times):8.3f} s  "
              f"({statistics.median(ratios):.2f}x, {ratios[0]:.2f}-{ratios[-1]:.2f}x)")
    print(f"GET /v1/{PROJECT}/stacks/{{name}}/{{id}} ({args.calls} calls): "
          f"p50 {show[0]:.2f} ms, p99 {show[1]:.2f} ms")
    print(f"GET /v1/{PROJECT}/stacks, {count} stacks ({args.list_calls} calls): "
          f"p50 {listed[0]:.2f} ms, p99 {listed[1]:.2f} ms")


if __name__ == "__main__":
    main()
