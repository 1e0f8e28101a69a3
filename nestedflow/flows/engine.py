"""TaskFlow's parallel engine with a compiler that stays linear in the flow size.

A traversal is one graph flow with a task per resource. Stock TaskFlow 6.5
compiles such a flow in quadratic time and memory (4,000 tasks: 16 s and
2.7 GB on the benchmark machine, doc/source/performance.rst), for two
reasons this module removes without changing what the compilation is:

* ``FlowCompiler`` merges the children's graphs one at a time with
  ``networkx.compose``, which copies the whole graph merged so far at each
  step; :class:`LinearFlowCompiler` adds every child graph into one graph
  in place.
* every atom's scope walker looks itself up in the compiled hierarchy with
  a depth-first search from the root; :class:`IndexedNode` answers that
  lookup from an index kept by the root.

It also waits for atoms differently. TaskFlow schedules every ready atom
at once (a thousand, for a flat stack) and, after each completion, waits
with ``futurist.waiters.wait_for_any`` on all the futures not done yet,
which installs and removes a waiter on each of them: quadratic again.
:class:`CompletionWaiter` is told of completions by a done-callback
instead, so a wait costs set operations on what completed.

The engine is registered in TaskFlow's own ``taskflow.engines`` entry-point
namespace as :data:`ENGINE` and loaded by name like TaskFlow's engines.
"""

import functools
import threading

from taskflow import flow as tf_flow
from taskflow import task as tf_task
from taskflow.engines.action_engine import builder, compiler, engine, runtime
from taskflow.types import graph as gr
from taskflow.types import tree as tr

#: The entry-point name of :class:`ParallelEngine` (setup.cfg).
ENGINE = "nestedflow-parallel"


class IndexedNode(tr.Node):
    """A hierarchy node whose root indexes every node added beneath it."""

    def __init__(self, item, **kwargs):
        super().__init__(item, **kwargs)
        self._index = {}

    def _root(self):
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def add(self, child):
        super().add(child)
        root = self._root()
        if isinstance(root, IndexedNode):
            for node in child.dfs_iter(include_self=True):
                # The first node found for an item wins, as in a search.
                root._index.setdefault(node.item, node)

    def find(self, item, only_direct=False, include_self=True):
        if self.parent is None and not only_direct and include_self:
            if item == self.item:
                return self
            found = self._index.get(item)
            if found is not None:
                return found
        return super().find(item, only_direct=only_direct, include_self=include_self)


class LinearFlowCompiler(compiler.FlowCompiler):
    """``FlowCompiler`` with the children's graphs merged in place.

    The edges it adds are the stock compiler's: the flow's own links, the
    flow node before every entry node, and a terminator after every exit
    node. Flows with a retry controller are left to the stock compiler.
    """

    def compile(self, flow, parent=None):
        if flow.retry is not None:
            return super().compile(flow, parent=parent)
        graph = gr.DiGraph(name=flow.name)
        graph.add_node(flow, kind=compiler.FLOW, noop=True)
        tree_node = IndexedNode(flow, kind=compiler.FLOW, noop=True)
        if parent is not None:
            parent.add(tree_node)
        decomposed = {child: self._deep_compiler_func(child, parent=tree_node)[0]
                      for child in flow}
        for child_graph in decomposed.values():
            overlaps = sum(1 for node in child_graph.nodes if node in graph)
            if overlaps:
                raise ValueError(
                    f"Can not merge graph {child_graph} into {graph} since there are "
                    f"{overlaps} overlapping nodes (and we do not support merging nodes)")
            graph.add_nodes_from(child_graph.nodes(data=True))
            graph.add_edges_from(child_graph.edges(data=True))
        for u, v, attr_dict in flow.iter_links():
            _link(graph, decomposed[u].no_successors_iter(),
                  list(decomposed[v].no_predecessors_iter()), attr_dict)
        invariant = {compiler.LINK_INVARIANT: True}
        _link(graph, [flow],
              [node for node in graph.no_predecessors_iter() if node is not flow], invariant)
        terminator = compiler.Terminator(flow)
        graph.add_node(terminator, kind=compiler.FLOW_END, noop=True)
        _link(graph, [node for node in graph.no_successors_iter() if node is not terminator],
              [terminator], invariant)
        return graph, tree_node


def _link(graph, sources, targets, attr_dict):
    # Each edge gets its own copy of the attributes, as the stock compiler
    # gives them: TaskFlow updates them per edge later.
    for u in sources:
        for v in targets:
            if attr_dict:
                graph.add_edge(u, v, attr_dict=dict(attr_dict))
            elif not graph.has_edge(u, v):
                graph.add_edge(u, v)


class PatternCompiler(compiler.PatternCompiler):
    """The stock pattern compiler using :class:`LinearFlowCompiler`."""

    def __init__(self, root, freeze=True):
        super().__init__(root, freeze=freeze)
        self._matchers = [
            (tf_flow.Flow, LinearFlowCompiler(self._compile)),
            (tf_task.Task, compiler.TaskCompiler()),
        ]


class CompletionWaiter:
    """``wait_for_any(fs, timeout)`` -> ``(done, not_done)`` for one engine.

    Each future is watched once, by a done-callback; a wait returns the
    watched futures that completed (none after ``timeout``) and the rest.
    """

    def __init__(self):
        self._cond = threading.Condition()
        self._completed = set()
        self._watched = set()

    def _on_done(self, future):
        with self._cond:
            self._completed.add(future)
            self._cond.notify_all()

    def __call__(self, fs, timeout=None):
        fs = set(fs)
        for future in fs - self._watched:
            self._watched.add(future)
            # Called at once (in this thread) if it is done already.
            future.add_done_callback(self._on_done)
        with self._cond:
            if not self._completed & fs:
                self._cond.wait(timeout)
            done = self._completed & fs
            self._completed -= done
        self._watched -= done
        return done, fs - done


class _Runtime(runtime.Runtime):
    @functools.cached_property
    def builder(self):
        return builder.MachineBuilder(self, CompletionWaiter())


class ParallelEngine(engine.ParallelActionEngine):
    """TaskFlow's parallel engine, compiling with :class:`PatternCompiler` and
    waiting with :class:`CompletionWaiter`."""

    def __init__(self, flow, flow_detail, backend, options):
        super().__init__(flow, flow_detail, backend, options)
        self._compiler = PatternCompiler(flow)

    def compile(self):
        super().compile()
        # The stock runtime with only its state machine's waiter replaced;
        # nothing has used its builder yet.
        if type(self._runtime) is runtime.Runtime:
            self._runtime.__class__ = _Runtime
