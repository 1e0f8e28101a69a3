"""Graph shapes shared by the nestedflow cases and their stock-TaskFlow baselines.

A shape is a list of nodes, each ``(name, parents, wait_secs)``: the same
list becomes a HOT template (``depends_on`` edges, ``OS::Heat::None`` or
``OS::Heat::TestResource``) and a graph flow of plain TaskFlow tasks
(``requires``/``provides`` symbols), so both sides run the same graph.
"""

import collections
import heapq
import random

import yaml

HOT_VERSION = "2018-08-31"


def flat(n):
    return [(f"r{i}", (), 0.0) for i in range(n)]


def chain(n):
    return [(f"r{i}", (f"r{i - 1}",) if i else (), 0.0) for i in range(n)]


def binary_tree(n):
    """Node i depends on its parent (i - 1) // 2: the root is created first."""
    return [(f"r{i}", (f"r{(i - 1) // 2}",) if i else (), 0.0) for i in range(n)]


def random_dag(n, seed=20240601, min_wait=0.05, max_wait=0.5, window=64, max_parents=2):
    """A seeded random DAG: node i depends on 0..max_parents of the ``window``
    nodes before it; every node waits uniformly in [min_wait, max_wait]."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        candidates = list(range(max(0, i - window), i))
        k = min(len(candidates), rng.randint(0, max_parents))
        parents = tuple(f"r{j}" for j in sorted(rng.sample(candidates, k)))
        nodes.append((f"r{i}", parents, round(rng.uniform(min_wait, max_wait), 3)))
    return nodes


SHAPES = {
    "flat": flat,
    "chain": chain,
    "tree": binary_tree,
    "dag": random_dag,
}


def build(shape, n):
    return SHAPES[shape](n)


def critical_path(nodes):
    """Longest sum of waits along any dependency path (nodes are topologically sorted)."""
    finish = {}
    for name, parents, wait in nodes:
        finish[name] = wait + max((finish[p] for p in parents), default=0.0)
    return max(finish.values(), default=0.0)


def total_work(nodes):
    return sum(wait for _, _, wait in nodes)


def lower_bound(nodes, workers):
    """No schedule on ``workers`` workers beats max(critical path, work / workers)."""
    return max(critical_path(nodes), total_work(nodes) / workers)


def list_schedule(nodes, workers):
    """Makespan of a zero-overhead FIFO list schedule on ``workers`` workers:
    what a perfect engine that starts ready nodes in template order achieves."""
    children = {name: [] for name, _, _ in nodes}
    pending = {}
    wait = {}
    for name, parents, secs in nodes:
        pending[name] = len(parents)
        wait[name] = secs
        for parent in parents:
            children[parent].append(name)
    ready = collections.deque(name for name, _, _ in nodes if not pending[name])
    running = []
    now = 0.0
    while ready or running:
        while ready and len(running) < workers:
            name = ready.popleft()
            heapq.heappush(running, (now + wait[name], name))
        now, name = heapq.heappop(running)
        for child in children[name]:
            pending[child] -= 1
            if not pending[child]:
                ready.append(child)
    return now


def template(nodes, type_name="OS::Heat::None"):
    """A HOT template of the shape: TestResource where a node waits, else
    ``type_name``."""
    resources = {}
    for name, parents, wait in nodes:
        if wait:
            res = {"type": "OS::Heat::TestResource", "properties": {"wait_secs": wait}}
        else:
            res = {"type": type_name}
        if parents:
            res["depends_on"] = list(parents)
        resources[name] = res
    return {"heat_template_version": HOT_VERSION, "resources": resources}


def group_templates(members, resources_per_member, wait):
    """A ResourceGroup of ``members`` nested stacks (a template resource each)
    of ``resources_per_member`` independent TestResources; returns (template, files)."""
    member = {
        "heat_template_version": HOT_VERSION,
        "resources": {
            f"t{i}": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": wait}}
            for i in range(resources_per_member)
        },
    }
    parent = {
        "heat_template_version": HOT_VERSION,
        "resources": {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": members, "resource_def": {"type": "member.yaml"}},
            }
        },
    }
    return parent, {"member.yaml": yaml.safe_dump(member)}


def nested_templates(children, resources_per_child):
    """``children`` template resources (one nested stack each) of
    ``resources_per_child`` OS::Heat::None; returns (template, files)."""
    child = template(flat(resources_per_child))
    parent = {
        "heat_template_version": HOT_VERSION,
        "resources": {f"c{i}": {"type": "child.yaml"} for i in range(children)},
    }
    return parent, {"child.yaml": yaml.safe_dump(child)}


def update_templates(n):
    """(old, new) templates of ``n`` independent TestResources for a mixed
    update: half updated in place (a new value), a quarter replaced (a new
    update_replace_value), a quarter unchanged."""
    def resources(version):
        out = {}
        for i in range(n):
            kind = i % 4
            value = f"v{version}" if kind in (0, 1) else "v0"
            replace = str(version) if kind == 2 else "0"
            out[f"r{i}"] = {"type": "OS::Heat::TestResource",
                            "properties": {"value": value, "update_replace_value": replace}}
        return {"heat_template_version": HOT_VERSION, "resources": out}

    return resources(0), resources(1)
