"""The partition tests' cluster, workload and verdict.

Three conductors, each a host of its own (:class:`partition_net.Network`),
run stacks -- two chains and one with nested stacks (a template resource
and a ResourceGroup of two template members) -- on a PostgreSQL and a
ZooKeeper ensemble of the test's own. The verdict is read from the
database (stacks, resources, events, physical objects) and from what a
ZooKeeper watch saw of the conductors' sessions:

* every stack of every tree settles as asked;
* no physical object is made twice (one object ever per resource: the
  updates are in place) and none is left behind (one live object per
  current resource, none after a delete);
* no write by a conductor after it lost its claim: no event by a
  conductor between the expiry of its session and its next registration,
  and none in a traversal another conductor wrote in after that expiry;
* no stack stalls after its link heals: in every tree still running, no
  gap between writes (or between the heal and the first write) longer
  than the session timeout plus 10 s.
"""

import collections
import contextlib
import datetime
import fcntl
import json
import re
import threading
import time
import uuid

import sqlalchemy as sa
from conductor_cluster import SESSION_TIMEOUT, Cluster, Probe
from kazoo.client import KazooClient
from kazoo.recipe import watchers

from nestedflow.db import models

CONDUCTORS = ("c1", "c2", "c3")
STALL_BOUND = SESSION_TIMEOUT + 10.0
#: What conductor logs say when the database refused a write of a run
#: that no longer owned its work.
REFUSED = re.compile(r"fenced off|lost ownership|OwnershipLost|ResourceLocked|Fenced\b")
#: Only one partition scenario at a time on a machine: they count seconds.
LOCK_PATH = "/tmp/nestedflow-partition-tests.lock"


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@contextlib.contextmanager
def one_at_a_time():
    with open(LOCK_PATH, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class PartitionCluster(Cluster):
    """Conductors in the network's namespaces, on the test's own servers."""

    def __init__(self, net, postgres, ensemble, database, tmp_path):
        self.net, self.postgres, self.ensemble, self.database = net, postgres, ensemble, database
        zk = KazooClient(hosts=ensemble.hosts(), timeout=10.0)
        zk.start(timeout=30)
        super().__init__(postgres.url(database), tmp_path, zk)
        self.jobboard_url = f"zookeeper://{ensemble.hosts()}{self.root}"
        self.lapses = []  # (conductor, lost at, registered again at or None)
        self._watch = None

    def conductor_urls(self, name):
        return (self.postgres.url(self.database, host=self.net.address(name, "pg")),
                f"zookeeper://{self.ensemble.hosts(self.net.address(name, 'zk'))}{self.root}",
                f"rabbit://guest:guest@{self.net.address(name, 'mq')}:{self.net.rabbit_port}/")

    def command_prefix(self, name):
        return self.net.prefix(name)

    def watch_sessions(self):
        """Record when each conductor's registration (an ephemeral node of its
        session) vanishes and comes back: the claims it held lapse with it."""
        path = f"{self.root}/conductors"
        self.zk.ensure_path(path)
        seen = set()

        def changed(children):
            now = utcnow()
            for name in seen - set(children):
                self.lapses.append([name, now, None])
            for name in set(children) - seen:
                for lapse in self.lapses:
                    if lapse[0] == name and lapse[2] is None:
                        lapse[2] = now
            seen.clear()
            seen.update(children)

        self._watch = watchers.ChildrenWatch(self.zk, path, func=changed,
                                             allow_session_lost=True)

    def refused_writes(self):
        return sum(len(REFUSED.findall(self.output(c))) for c in self._all)

    def close(self):
        super().close()
        with contextlib.suppress(Exception):
            self.zk.stop()
            self.zk.close()


# -- the workload ---------------------------------------------------------


INNER = {
    "heat_template_version": "2018-08-31",
    "parameters": {"value": {"type": "string"}},
    "resources": {
        "a": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_param": "value"},
                             "action_wait_secs": {"create": 1, "update": 1, "delete": 0.5}}},
        "b": {"type": "OS::Heat::TestResource", "depends_on": ["a"],
              "properties": {"value": {"get_param": "value"},
                             "action_wait_secs": {"create": 1, "update": 1, "delete": 0.5}}},
    },
}


def nested_template():
    member = {"type": "inner.yaml", "properties": {"value": {"get_param": "value"}}}
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"value": {"type": "string"}},
        "resources": {
            "inner": member,
            "group": {"type": "OS::Heat::ResourceGroup",
                      "properties": {"count": 2, "resource_def": member}},
            "last": {"type": "OS::Heat::TestResource", "depends_on": ["inner", "group"],
                     "properties": {"value": {"get_param": "value"}}},
        },
    }


def chain_template():
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"value": {"type": "string"}},
        "resources": {
            f"r{i}": {"type": "OS::Heat::TestResource",
                      "properties": {"value": {"get_param": "value"},
                                     "action_wait_secs": {"create": 1.5, "update": 1.5,
                                                          "delete": 0.5}},
                      **({"depends_on": [f"r{i - 1}"]} if i else {})}
            for i in range(3)},
    }


class Workload:
    """Two chains and a nested tree, created, updated and deleted together."""

    def __init__(self, cluster, timeout=240):
        self.cluster = cluster
        self.engine = cluster.engine()
        self.probe = Probe(cluster.db_url)
        # The scenarios restart the server under it.
        self.probe.engine.dispose()
        self.probe.engine = sa.create_engine(cluster.db_url, pool_pre_ping=True)
        self.timeout = timeout
        self.roots = []
        self.heals = []  # (utc time a fault healed, what)
        self.all_stacks = set()

    def close(self):
        self.probe.close()

    def _wait_all(self, action):
        for root in self.roots:
            final = self.engine.wait(root, timeout=self.timeout)
            assert (final.action, final.status) == (action, "COMPLETE"), (
                root, final.action, final.status, final.status_reason)
        for stack in self.tree_stacks():
            self.all_stacks.add(stack["id"])
            # Every stack of every tree, nested ones included.
            assert (stack["action"], stack["status"]) == (action, "COMPLETE"), (
                dict(stack), self.history(stack["parent_id"]), self.history(stack["id"]))

    def create(self, value="v1"):
        tag = uuid.uuid4().hex[:6]
        inner = {"inner.yaml": json.dumps(INNER)}
        for kind, template, files in (("chain-a", chain_template(), None),
                                      ("chain-b", chain_template(), None),
                                      ("tree", nested_template(), inner)):
            stack = self.engine.create_stack(f"{kind}-{tag}", template, files=files,
                                             parameters={"value": value})
            self.roots.append(stack.id)

    def update(self, value="v2"):
        for root in self.roots:
            self.engine.update_stack(root, None, parameters={"value": value}, existing=True)

    def delete(self):
        for root in self.roots:
            self.engine.delete_stack(root)

    def settle(self, action):
        self._wait_all(action)

    # -- reading ------------------------------------------------------------

    def tree_stacks(self):
        stacks = models.Stack.__table__
        with self.probe.engine.connect() as conn:
            return list(conn.execute(sa.select(stacks).where(sa.or_(
                stacks.c.id.in_(self.roots), stacks.c.root_id.in_(self.roots)))).mappings())

    def history(self, stack_id):
        """One line per event of ``stack_id``, for a failure's message."""
        return "\n".join(
            f"{e['timestamp']} {e['engine_id']} {e['resource_name']} {e['action']} "
            f"{e['status']} {e['status_reason'][:120]}" for e in self.probe.events(stack_id))

    def tree_ids(self):
        return [s["id"] for s in self.tree_stacks()]

    def events(self):
        ids = self.tree_ids()
        with self.probe.engine.connect() as conn:
            return list(conn.execute(sa.select(models.Event).where(
                models.Event.stack_id.in_(ids)).order_by(models.Event.id)).mappings())

    def objects(self):
        ids = self.tree_ids()
        with self.probe.engine.connect() as conn:
            return list(conn.execute(sa.select(models.PhysicalObject).where(
                models.PhysicalObject.stack_id.in_(ids))).mappings())

    def resources(self):
        ids = self.tree_ids()
        with self.probe.engine.connect() as conn:
            return list(conn.execute(sa.select(models.Resource).where(
                models.Resource.stack_id.in_(ids))).mappings())

    # -- the verdict ----------------------------------------------------------

    def assert_objects(self, deleted=False):
        """One live object per current resource of a built-in type, none made twice."""
        objects = self.objects()
        made = collections.Counter(o["resource_id"] for o in objects)
        twice = {k: n for k, n in made.items() if n > 1}
        assert not twice, f"objects made twice: {twice}"
        live = [o for o in objects if o["deleted_at"] is None]
        if deleted:
            assert live == [], f"objects leaked: {live}"
            return len(objects)
        expected = sorted(r["physical_id"] for r in self.resources()
                          if r["current"] and r["type"] == "OS::Heat::TestResource"
                          and r["status"] == "COMPLETE" and r["action"] != "DELETE")
        assert sorted(o["id"] for o in live) == expected, (live, expected)
        assert all(r["engine_id"] is None for r in self.resources()), "resource lock left"
        return len(live)

    def late_writes(self, strict=True):
        """Events a conductor wrote after its claims lapsed with its session.

        ``strict=False`` leaves out those written before any other run
        took the traversal over (conductors.rst, "Not guaranteed": when a
        whole ensemble loses its quorum every session expires at once and
        nobody can claim until they register again)."""
        late = []
        events = self.events()
        for name, lost, back in self.cluster.lapses:
            for event in events:
                if event["engine_id"] != name or event["timestamp"] <= lost:
                    continue
                if strict and (back is None or event["timestamp"] < back):
                    late.append(("no session", dict(event)))
                    continue
                # Registered again: a write of the run that lapsed, in a
                # traversal another conductor took over after the lapse, is
                # still a late one -- unless that conductor's own claim
                # lapsed in turn and this one claimed the job again.
                if event["traversal_id"] not in {
                        e["traversal_id"] for e in events
                        if e["engine_id"] == name and e["timestamp"] <= lost}:
                    continue
                others = [e for e in events if e["traversal_id"] == event["traversal_id"]
                          and e["engine_id"] not in (None, name)
                          and lost < e["timestamp"] < event["timestamp"]
                          and not self._lapsed(e["engine_id"], e["timestamp"],
                                               event["timestamp"])]
                if others:
                    late.append(("taken over", dict(event)))
        return late

    def _lapsed(self, name, start, end):
        return any(n == name and start < lost < end for n, lost, _ in self.cluster.lapses)

    def heal(self, what):
        self.heals.append((utcnow(), what))

    def stalls(self):
        """(tree, seconds, heal) where a tree running when a fault healed
        wrote nothing for longer than STALL_BOUND before it settled."""
        found = []
        stacks = {s["id"]: s for s in self.tree_stacks()}
        by_root = collections.defaultdict(list)
        for event in self.events():
            root = stacks[event["stack_id"]]["root_id"] or event["stack_id"]
            by_root[root].append(event)
        for healed, what in self.heals:
            for root, events in by_root.items():
                own = [e for e in events if e["stack_id"] == root and not e["resource_name"]]
                before = [e for e in own if e["timestamp"] < healed]
                if not before or before[-1]["status"] != "IN_PROGRESS":
                    continue  # settled before the heal
                settled = next((e["timestamp"] for e in own if e["timestamp"] >= healed
                                and e["status"] != "IN_PROGRESS"), None)
                times = sorted(e["timestamp"] for e in events if e["timestamp"] >= healed
                               and (settled is None or e["timestamp"] <= settled))
                gaps = [(b - a).total_seconds()
                        for a, b in zip([healed, *times], times, strict=False)]
                if gaps and max(gaps) > STALL_BOUND:
                    found.append((root, max(gaps), what))
        return found


def busy_conductor(workload, exclude=(), timeout=60):
    """The conductor that most recently started a resource action of the workload."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in reversed(workload.events()):
            if (event["status"] == "IN_PROGRESS" and event["engine_id"]
                    and event["engine_id"] not in exclude and event["resource_name"]):
                return event["engine_id"]
        time.sleep(0.2)
    raise AssertionError("no conductor started an action of the workload")


def wait_parents_waiting(workload, timeout=90):
    """Until the tree's parent waits on a nested stack (one of them is running)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        nested = [s for s in workload.tree_stacks() if s["parent_id"]]
        if any(s["status"] == "IN_PROGRESS" for s in nested):
            return
        time.sleep(0.2)
    raise AssertionError("no nested stack started")


class Counts:
    """What a scenario did, printed at its end."""

    def __init__(self):
        self.values = collections.Counter()

    def add(self, **kwargs):
        self.values.update(kwargs)

    def line(self, name):
        return f"partition {name}: " + ", ".join(f"{k}={v}" for k, v in self.values.items())


def background(fn, *args):
    thread = threading.Thread(target=fn, args=args, daemon=True)
    thread.start()
    return thread
