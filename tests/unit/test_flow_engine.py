"""nestedflow's TaskFlow engine compiles flows exactly as stock TaskFlow does."""

import time

import futurist
import taskflow.engines
from taskflow import retry, task
from taskflow.engines.action_engine import compiler as stock
from taskflow.engines.action_engine import scopes
from taskflow.patterns import graph_flow, linear_flow, unordered_flow

from nestedflow.taskflow import parallel_engine as engine


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
    # Providers at several depths, a retry-controlled subflow, and a name
    # provided twice (scope order decides which one an atom sees).
    deep = graph_flow.Flow("deep")
    sub = linear_flow.Flow("sub", retry=retry.Times(2, name="again")).add(
        Noop("s1", provides="v"), Noop("s2", provides="w", requires=["v"]))
    side = unordered_flow.Flow("side").add(
        Noop("o1", provides="v2"), linear_flow.Flow("side-inner").add(Noop("o2", provides="v3")))
    deep.add(Noop("root", provides="r"), sub, side,
             Noop("user", requires=["r", "v", "w", "v2", "v3"]))
    outer = linear_flow.Flow("wrap").add(
        Noop("pre", provides="v"), deep, Noop("post", requires=["v"]))
    return [flat, chain, nested, outer]


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


def test_scope_walker_yields_the_stock_scopes_of_what_an_atom_looks_up():
    """Stock scopes list every predecessor; TaskFlow only ever looks for the
    providers of the atom's own arguments in them, taking those of the first
    level that has any. Ours hold exactly those providers, in the same
    levels and order."""
    narrowed = 0
    for flow_ in _flows():
        compilation = engine.PatternCompiler(flow_).compile()
        index = engine.ScopeIndex(compilation)
        atoms = [node for node, data in compilation.execution_graph.nodes(data=True)
                 if data["kind"] in stock.ATOMS]
        assert atoms
        by_name = {atom.name: atom for atom in atoms}
        for atom in atoms:
            looked_up = {*atom.rebind.values(), *atom.revert_rebind.values(),
                         *atom.optional, *atom.revert_optional}
            for names_only in (True, False):
                theirs = scopes.ScopeWalker(compilation, atom, names_only=names_only)
                ours = engine.ScopeWalker(compilation, atom, index, names_only=names_only)

                def provides(item, names_only=names_only, looked_up=looked_up, by_name=by_name):
                    node = by_name[item] if names_only else item
                    return bool(looked_up & set(node.provides))

                everything = [list(level) for level in theirs]
                expected = [kept for kept in ([i for i in level if provides(i)]
                                              for level in everything) if kept]
                assert [level for level in ours if level] == expected, (flow_.name, atom.name)
                assert [level for level in ours if level] == expected  # computed once
                narrowed += sum(map(len, everything)) - sum(map(len, expected))
    assert narrowed  # the stock walkers listed predecessors nobody asks for


def test_scope_index_knows_which_atoms_precede_which():
    flow_ = _flows()[1]  # a chain c0 -> c7
    compilation = engine.PatternCompiler(flow_).compile()
    index = engine.ScopeIndex(compilation)
    atoms = {node.name: node for node in compilation.execution_graph.nodes
             if getattr(node, "name", None) in {f"c{i}" for i in range(8)}}
    for later in range(8):  # asked in topological order, then out of it
        assert index.precedes(atoms["c0"], atoms[f"c{later}"]) == (later > 0)
    for later in reversed(range(8)):
        for earlier in range(8):
            assert index.precedes(atoms[f"c{earlier}"], atoms[f"c{later}"]) == (earlier < later)


def test_flows_find_the_nearest_provider():
    flow_ = _flows()[3]
    tf_engine = taskflow.engines.load(flow_, engine=engine.ENGINE)
    tf_engine.run()
    walker = tf_engine._runtime.fetch_scopes_for("user")
    assert isinstance(walker, engine.ScopeWalker)
    assert tf_engine.storage.fetch_mapped_args({"v": "v"}, atom_name="user") == {"v": "s1"}
    assert tf_engine.storage.fetch_mapped_args({"v": "v"}, atom_name="post") == {"v": "s1"}


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


def test_completion_waiter_watches_futures_as_the_engine_adds_them():
    """TaskFlow's state machine keeps the ``not_done`` a wait returned and
    adds what it schedules next to it (``memory.not_done.update``): those
    are watched as they are added, so a wait never rescans what is in flight."""
    import threading
    from concurrent import futures

    waiter = engine.CompletionWaiter()
    in_flight = [futures.Future() for _ in range(3)]
    done, not_done = waiter(set(in_flight), timeout=0.01)
    assert done == set()
    added = futures.Future()
    not_done.update([added])
    threading.Timer(0.05, added.set_result, args=(1,)).start()
    done, still = waiter(not_done, timeout=5)
    assert done == {added}
    # The same set, kept and shrunk in place: nothing copied per wait.
    assert still is not_done and still == set(in_flight)
    # Watched once: a completion is reported once, not once per wait.
    in_flight[0].set_result(2)
    done, still = waiter(still, timeout=5)
    assert done == {in_flight[0]}
    done, still = waiter(still, timeout=0.01)
    assert done == set() and still == set(in_flight[1:])


class Boom(task.Task):
    def execute(self, **kwargs):
        raise RuntimeError("boom")


def _decided_flows():
    """Flows whose outcome depends on which atoms the selector picks:
    decider edges that ignore atoms or whole branches, and a failure that
    reverts what ran."""
    ignored = graph_flow.Flow("ignored")
    a, b, c, d = Noop("a"), Noop("b"), Noop("c"), Noop("d")
    e, f = Noop("e"), Noop("f")
    ignored.add(a, b, c, d, e, f)
    # a -> b is refused for b only: c (after b) still runs, b is IGNORE.
    ignored.link(a, b, decider=lambda history: False, decider_depth="atom")
    ignored.link(b, c)
    # a -> d is refused for everything after d as well.
    ignored.link(a, d, decider=lambda history: False, decider_depth="all")
    ignored.link(d, e)
    ignored.link(c, f)
    failing = graph_flow.Flow("failing")
    failing.add(Noop("x", provides="x"), Noop("y", requires=["x"], provides="y"),
                Noop("side", requires=["x"]), Boom("z", requires=["y"]))
    chain = _flows()[1]
    return [ignored, failing, chain, _flows()[0], _flows()[3]]


def _final(flow_, engine_name, executor):
    tf_engine = taskflow.engines.load(flow_, engine=engine_name, executor=executor)
    try:
        tf_engine.run()
    except RuntimeError:
        pass
    states = tf_engine.storage.get_atoms_states(
        [atom.name for atom in tf_engine._runtime.iterate_nodes(stock.ATOMS)])
    return tf_engine.storage.get_flow_state(), states


def test_selector_runs_what_stock_taskflow_runs():
    # A shared executor: an engine's own is shut down at the end of its run,
    # which takes a second.
    with futurist.ThreadPoolExecutor(max_workers=4) as executor:
        for flow_ in _decided_flows():
            ours = _final(flow_, engine.ENGINE, executor)
            theirs = _final(flow_, "parallel", executor)
            assert ours == theirs, flow_.name
        # The cases above do exercise ignoring and reverting.
        flow_state, states = _final(_decided_flows()[0], engine.ENGINE, executor)
        assert states["b"][0] == "IGNORE" and states["c"][0] == "SUCCESS"
        assert states["d"][0] == "IGNORE" and states["e"][0] == "IGNORE"
        flow_state, states = _final(_decided_flows()[1], engine.ENGINE, executor)
        assert flow_state == "REVERTED" and states["y"][0] == "REVERTED"


class Recorded(task.Task):
    """Appends its name to ``log`` when it runs; fails the first ``fail`` runs."""

    def __init__(self, name, log, fail=0, **kwargs):
        super().__init__(name, **kwargs)
        self.log, self.fail = log, fail

    def execute(self, **kwargs):
        self.log.append(self.name)
        if self.fail:
            self.fail -= 1
            raise RuntimeError(f"{self.name} fails")

    def revert(self, **kwargs):
        self.log.append(f"revert {self.name}")


def _retried_chain(log):
    """A chain through a retried subflow whose middle task fails once: the
    retry resets atoms that had been found ready, which must run again in
    order, and only then may the rest of the chain run."""
    retried = linear_flow.Flow("retried", retry=retry.Times(3, name="retry")).add(
        Recorded("r1", log, provides="r1"),
        Recorded("r2", log, fail=1, requires=["r1"], provides="r2"),
        Recorded("r3", log, requires=["r2"], provides="r3"))
    return graph_flow.Flow("outer").add(
        Recorded("before", log, provides="b"),
        retried,
        Recorded("after", log, requires=["r3", "b"]))


def _runs_by_engine(build):
    """engine name -> what the flow ``build(log)`` logged when run by it."""
    with futurist.ThreadPoolExecutor(max_workers=4) as executor:
        runs = {}
        for name in (engine.ENGINE, "parallel"):
            log = runs[name] = []
            taskflow.engines.load(build(log), engine=name, executor=executor).run()
    return runs


def test_selector_reruns_a_retried_chain_as_stock_taskflow_does():
    runs = _runs_by_engine(_retried_chain)
    assert runs[engine.ENGINE] == runs["parallel"]
    assert runs["parallel"] == ["before", "r1", "r2", "revert r2", "revert r1",
                                "r1", "r2", "r3", "after"]


class Slow(Recorded):
    def execute(self, **kwargs):
        time.sleep(0.3)
        super().execute(**kwargs)


def _ignored_parent(log):
    """When ``y`` may run, its decider ignores it and, in its flow, ``v``
    after it -- while ``v``'s other parent ``s`` still runs. ``w``, after
    the flow, has the ignored ``v`` as its only parent, and must still wait
    for ``s``."""
    inner = graph_flow.Flow("inner")
    x, y, v, s = Recorded("x", log), Recorded("y", log), Recorded("v", log), Slow("s", log)
    inner.add(x, y, v, s)
    inner.link(x, y, decider=lambda history: False, decider_depth="flow")
    inner.link(y, v)
    inner.link(s, v)
    return linear_flow.Flow("outer").add(inner, Recorded("w", log))


def test_selector_waits_behind_an_ignored_parent_as_stock_taskflow_does():
    runs = _runs_by_engine(_ignored_parent)
    assert runs[engine.ENGINE] == runs["parallel"] == ["x", "s", "w"]
