"""nestedflow's TaskFlow engine compiles flows exactly as stock TaskFlow does."""

import taskflow.engines
from taskflow import task
from taskflow.engines.action_engine import compiler as stock
from taskflow.patterns import graph_flow, linear_flow, unordered_flow

from nestedflow.flows import engine


class Noop(task.Task):
    def execute(self, **kwargs):
        return self.name


def _flows():
    flat = graph_flow.Flow("flat")
    flat.add(Noop("begin", provides="t"),
             *[Noop(f"r{i}", provides=f"r{i}", requires=["t"]) for i in range(20)],
             Noop("end", requires=[f"r{i}" for i in range(20)]))
    chain = graph_flow.Flow("chain")
    chain.add(Noop("c0", provides="c0"),
              *[Noop(f"c{i}", provides=f"c{i}", requires=[f"c{i - 1}"]) for i in range(1, 8)])
    nested = linear_flow.Flow("outer")
    inner = unordered_flow.Flow("inner").add(Noop("u1"), Noop("u2"))
    g1, g2, g3 = Noop("g1", provides="x"), Noop("g2", requires=["x"]), Noop("g3")
    graph = graph_flow.Flow("g").add(g1, g2, g3)
    graph.link(g3, g1)
    nested.add(Noop("first"), inner, graph, Noop("last"))
    return [flat, chain, nested]


def _shape(compilation):
    graph = compilation.execution_graph

    def name(node):
        return f"{type(node).__name__}:{getattr(node, 'name', node)}"

    nodes = {(name(n), graph.nodes[n].get("kind")) for n in graph.nodes}
    def frozen(value):
        if isinstance(value, dict):
            return tuple(sorted((k, frozen(v)) for k, v in value.items()))
        if isinstance(value, (set, frozenset, list, tuple)):
            return tuple(sorted(map(str, value)))
        return value

    edges = {(name(u), name(v), frozen(data)) for u, v, data in graph.edges(data=True)}
    return nodes, edges


def test_compilation_matches_stock_taskflow():
    for flow_ in _flows():
        ours = engine.PatternCompiler(flow_).compile()
        theirs = stock.PatternCompiler(flow_).compile()
        assert _shape(ours) == _shape(theirs), flow_.name
        # Every atom is found in the hierarchy, at the same place.
        for node in theirs.hierarchy.dfs_iter(include_self=True):
            found = ours.hierarchy.find(node.item)
            assert found is not None and found.item == node.item
            assert (found.parent.item if found.parent else None) == (
                node.parent.item if node.parent else None)


def test_engine_is_loadable_by_name_and_runs_a_flow():
    flow_ = _flows()[0]
    tf_engine = taskflow.engines.load(flow_, engine=engine.ENGINE)
    assert isinstance(tf_engine, engine.ParallelEngine)
    tf_engine.run()
    assert tf_engine.storage.fetch("r7") == "r7"


def test_completion_waiter_returns_what_completed_and_the_rest():
    import threading
    from concurrent import futures

    waiter = engine.CompletionWaiter()
    fs = {futures.Future() for _ in range(5)}
    first, *others = sorted(fs, key=id)
    # Nothing done: the timeout ends the wait with nothing.
    done, not_done = waiter(fs, timeout=0.01)
    assert done == set() and not_done == fs
    # Completed from another thread while waiting.
    threading.Timer(0.05, first.set_result, args=(1,)).start()
    done, not_done = waiter(fs, timeout=5)
    assert done == {first} and not_done == fs - {first}
    # Already done before the wait (callback runs at registration); a
    # completion is reported once.
    others[0].set_result(2)
    late = futures.Future()
    late.set_result(3)
    done, not_done = waiter(not_done | {late}, timeout=5)
    assert done == {others[0], late} and not_done == set(others[1:])
