"""How fast a parent resumes after its nested stack completes: notification vs polling.

    python -m bench.nested_wait [--stacks 20] [--db-url URL]

For each of ``--stacks`` parents with one ``OS::Heat::Stack`` child, the
latency is the time from the child's settled event to the parent's
"nested stack ... after N s" event (the parent task resuming). It runs
twice in one process, side by side: with nestedflow's notification wait,
and with a database-polling wait at Heat's default one-second interval.
"""

import argparse
import statistics
import tempfile
import time
import uuid

import yaml

import nestedflow

CHILD = yaml.safe_dump({
    "heat_template_version": "2018-08-31",
    "resources": {"x": {"type": "OS::Heat::TestResource",
                        "properties": {"value": "child", "wait_secs": 0.05}}},
})


class PollingWaits:
    """The baseline: check the database every ``interval`` seconds (Heat's
    check_create_complete loop), ignoring notifications."""

    def __init__(self, interval=1.0):
        self.interval = interval

    def wait(self, stack_ids, is_done, timeout=None, stop_event=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while not is_done():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(self.interval)
        return True

    def changed(self, stack_id, action, status, stack=None):
        pass

    def start(self):
        pass

    def close(self):
        pass


def latencies(engine, stacks):
    """Child settled -> parent resumed, per parent stack, in seconds."""
    results = []
    for parent in stacks:
        events = engine.list_events(parent.id)
        resumed = [e for e in events if e.resource_name == "child"
                   and e.status_reason.startswith("nested stack")]
        child_id = next(r.physical_id for r in engine.list_resources(parent.id)
                        if r.name == "child")
        settled = [e for e in engine.list_events(child_id)
                   if e.resource_name == engine.get_stack(child_id).name
                   and e.status == "COMPLETE"]
        if resumed and settled:
            results.append((resumed[0].timestamp - settled[-1].timestamp).total_seconds())
    return results


class _EngineWaitingWith(nestedflow.Engine):
    """An engine whose nested-stack waits go through ``waits``."""

    def __init__(self, *args, waits, **kwargs):
        self._waits = waits
        super().__init__(*args, **kwargs)

    def _make_runtime(self, **fields):
        return super()._make_runtime(**{**fields, "events": self._waits})


def run(db_url, count, waits=None, transport_url=None):
    if waits is None:
        engine = nestedflow.Engine(db_url=db_url, transport_url=transport_url)
    else:
        engine = _EngineWaitingWith(db_url=db_url, transport_url=transport_url, waits=waits)
    template = {"heat_template_version": "2018-08-31",
                "resources": {"child": {"type": "OS::Heat::Stack",
                                        "properties": {"template": CHILD}}}}
    try:
        created = []
        # A few at a time, like independent users: the parents' waits overlap.
        for i in range(count):
            stack = engine.create_stack(f"wait-{uuid.uuid4().hex[:8]}-{i}", template)
            created.append(stack)
            if len(created) % 4 == 0:
                for s in created[-4:]:
                    engine.wait(s.id, timeout=120)
        for stack in created:
            engine.wait(stack.id, timeout=120)
        return latencies(engine, created)
    finally:
        engine.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=20)
    parser.add_argument("--db-url")
    parser.add_argument("--transport-url", help="e.g. rabbit://guest:guest@127.0.0.1:5672/")
    args = parser.parse_args(argv)
    db_url = args.db_url or f"sqlite:///{tempfile.mkdtemp()}/nested-wait.sqlite"
    notified = run(db_url, args.stacks, transport_url=args.transport_url)
    polled = run(db_url, args.stacks, PollingWaits(1.0), transport_url=args.transport_url)
    rows = [("notification (oslo.messaging)", notified), ("DB polling every 1 s", polled)]
    print(f"{'wait':32} {'n':>4} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}")
    for label, values in rows:
        values = sorted(values)
        p90 = values[int(0.9 * (len(values) - 1))] if values else float("nan")
        print(f"{label:32} {len(values):>4} {statistics.median(values) * 1000:>10.1f} "
              f"{p90 * 1000:>8.1f} {max(values) * 1000:>8.1f}")
    ratio = statistics.median(polled) / max(statistics.median(notified), 1e-6)
    print(f"polling / notification median: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
