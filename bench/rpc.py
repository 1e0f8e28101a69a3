"""The cost of the engine's RPC API: a create through EngineClient against the
same create on the embedded Engine, and the latency of one call, in one run.

    python -m bench.rpc [--resources 1000] [--calls 500] [--runs 3]
                        [--db-url URL] [--transport-url rabbit://...]

Starts a ``nestedflow-engine`` on a fresh topic (same database URL as the
embedded engine, so both create the same stacks under the same conditions),
then for each of ``--runs``: creates a stack of ``--resources``
``OS::Heat::None`` on the embedded Engine and waits for it, and the same
through ``EngineClient`` (create, then wait -- on the service). Then it
times ``--calls`` ``get_stack`` calls through the client, and prints the
median create times side by side and the call latency's p50 and p99.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _template(n):
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(n)}}


def _start_service(db_url, transport_url, topic, log):
    process = subprocess.Popen(
        [sys.executable, "-m", "nestedflow.cmd.engine", "--db-url", db_url,
         "--transport-url", transport_url, "--topic", topic, "--host", "bench",
         "--log-file", log, "--no-socket"], cwd=REPO_ROOT)
    deadline = time.monotonic() + 60
    while True:
        try:
            with open(log) as f:
                if "listening on topic" in f.read():
                    return process
        except FileNotFoundError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"nestedflow-engine did not start (see {log})")
        time.sleep(0.1)


def _create(api, n):
    started = time.perf_counter()
    stack = api.create_stack(f"bench-{uuid.uuid4().hex[:8]}", _template(n))
    done = api.wait(stack.id, timeout=600)
    elapsed = time.perf_counter() - started
    if done.stack_status != "CREATE_COMPLETE":
        raise SystemExit(f"create failed: {done.status_reason}")
    return elapsed, stack.id


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.rpc", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db-url", help="default: a fresh SQLite file")
    parser.add_argument("--transport-url", default=os.environ.get(
        "NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/"))
    args = parser.parse_args(argv)

    import nestedflow
    from nestedflow.rpc import EngineClient

    tmp = tempfile.mkdtemp(prefix="nf-bench-rpc-")
    db_url = args.db_url or f"sqlite:///{tmp}/bench.sqlite"
    embedded = nestedflow.Engine(db_url=db_url)  # migrates before the service starts
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    service = _start_service(db_url, args.transport_url, topic, f"{tmp}/engine.log")
    client = EngineClient(transport_url=args.transport_url, topic=topic)
    try:
        _create(embedded, 10)  # warm-up, both paths
        _create(client, 10)
        local, remote, stack_id = [], [], None
        for _ in range(args.runs):
            local.append(_create(embedded, args.resources)[0])
            elapsed, stack_id = _create(client, args.resources)
            remote.append(elapsed)
        latencies = []
        for _ in range(args.calls):
            started = time.perf_counter()
            client.get_stack(stack_id)
            latencies.append(time.perf_counter() - started)
    finally:
        client.close()
        service.send_signal(signal.SIGTERM)
        service.wait(60)
        embedded.close()
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    local_s, remote_s = statistics.median(local), statistics.median(remote)
    print(f"create of {args.resources} OS::Heat::None ({args.runs} runs, median):")
    print(f"  embedded Engine   {local_s:8.2f} s")
    print(f"  EngineClient/RPC  {remote_s:8.2f} s  ({remote_s / local_s:.2f}x)")
    print(f"get_stack through EngineClient ({args.calls} calls): "
          f"p50 {p50:.2f} ms, p99 {p99:.2f} ms")


if __name__ == "__main__":
    main()
