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

Finding an atom's arguments was quadratic too: TaskFlow's scope walker
scans every sibling left of the atom for its predecessors (a flat stack's
last resource scans a thousand siblings to find the first task), looking
each sibling's position up with a list search, and listed every
predecessor (a chain's last task: all of them) although only the
providers of the atom's own arguments are ever looked for in them.
:class:`ScopeWalker` yields the scopes of those providers, in the same
order, from the predecessors themselves (:class:`ScopeIndex`).

And choosing what runs next was quadratic: after each completion TaskFlow
checks every descendant of the atom that completed (a chain of 500 checks
all the rest of the chain, 500 times), and checks each candidate's
ancestors from the same end every time (a flat stack's last task: a
thousand ancestors, after each of a thousand completions).
:class:`Selector` stops at descendants that cannot be ready yet and resumes
an ancestor check where the previous one stopped; it selects the same
atoms.

It also waits for atoms differently. TaskFlow schedules every ready atom
at once (a thousand, for a flat stack) and, after each completion, waits
with ``futurist.waiters.wait_for_any`` on all the futures not done yet,
which installs and removes a waiter on each of them: quadratic again.
:class:`CompletionWaiter` is told of completions by a done-callback
instead, so a wait costs set operations on what completed.

And it guards its storage with a plain reentrant lock
(:class:`StorageLock`) instead of fasteners' reader/writer lock, whose
pure-Python bookkeeping was a fifth of a small traversal's engine time.

The engine is registered in TaskFlow's own ``taskflow.engines`` entry-point
namespace as :data:`ENGINE` and loaded by name like TaskFlow's engines. The
TaskFlow hooks it overrides are TaskFlow's private ones, reached only
through :mod:`nestedflow.taskflow.compat`.
"""

import collections
import functools
import threading

from taskflow import states
from taskflow.engines.action_engine import (
    builder,
    compiler,
    deciders,
    traversal,
)
from taskflow.types import graph as gr
from taskflow.types import tree as tr
from taskflow.utils import misc

from nestedflow.taskflow import collector, journal_backend
from nestedflow.taskflow import compat as taskflow_compat

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


class LinearFlowCompiler(taskflow_compat.FlowCompiler):
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
        decomposed = {child: self.compile_child(child, tree_node) for child in flow}
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


class PatternCompiler(taskflow_compat.PatternCompiler):
    """The stock pattern compiler using :class:`LinearFlowCompiler`."""

    def __init__(self, root, freeze=True):
        super().__init__(root, LinearFlowCompiler, freeze=freeze)


class CompletionWaiter:
    """``wait_for_any(fs, timeout)`` -> ``(done, not_done)`` for one engine.

    Each future is watched once, by a done-callback; a wait returns the
    watched futures that completed (none after ``timeout``) and the rest.

    The ``not_done`` it returns is a :class:`_WatchedFutures`, which the
    state machine keeps as its set of futures in flight and adds newly
    scheduled futures to: they are watched as they are added, and a wait
    costs set operations on what completed only. Copying and diffing the
    whole set at each wait made a flat stack's run quadratic again (a
    thousand futures in flight, a wait per completion).
    """

    def __init__(self):
        self._cond = threading.Condition()
        self._completed = set()

    def _on_done(self, future):
        with self._cond:
            self._completed.add(future)
            self._cond.notify_all()

    def watch(self, future):
        # Called at once (in this thread) if it is done already.
        future.add_done_callback(self._on_done)

    def __call__(self, fs, timeout=None):
        if not isinstance(fs, _WatchedFutures) or fs.waiter is not self:
            fs = _WatchedFutures(self, fs)
        with self._cond:
            if not self._completed & fs:
                self._cond.wait(timeout)
            done = self._completed & fs
            self._completed -= done
        fs -= done
        return done, fs


class _WatchedFutures(set):
    """Futures in flight, each watched by ``waiter`` from when it is added."""

    def __init__(self, waiter, futures=()):
        super().__init__()
        self.waiter = waiter
        self.update(futures)

    def update(self, *others):
        for other in others:
            for future in other:
                if future not in self:
                    self.add(future)
                    self.waiter.watch(future)


class ScopeIndex:
    """What the scope walkers of one compilation share: sibling positions,
    each name's providers, and which atoms precede which.

    Whether ``p`` precedes ``atom`` is answered by a search back from
    ``atom`` that stops at nodes placed before ``p`` in a topological order
    (they cannot follow ``p``) and at nodes already known to follow ``p``;
    walkers worked out in that order find the traversal's first task (which
    every resource task reads) one step back instead of a whole chain back.
    """

    def __init__(self, compilation):
        graph = compilation.execution_graph
        self.graph = graph
        self.positions = {}  # node id -> {child item: index}
        self.order = list(graph.topological_sort())
        self._rank = {node: i for i, node in enumerate(self.order)}
        self.providers = collections.defaultdict(list)
        for node in self.order:
            if graph.nodes[node]["kind"] in compiler.ATOMS:
                for name in node.provides:
                    self.providers[name].append(node)
        self._after = collections.defaultdict(set)
        self._not_after = collections.defaultdict(set)

    def precedes(self, p, atom):
        after, not_after = self._after[p], self._not_after[p]
        if atom in after:
            return True
        floor = self._rank[p]
        seen = {atom}
        queue = collections.deque(seen)
        while queue:
            for node in self.graph.predecessors(queue.popleft()):
                if node is p or node in after:
                    after.add(atom)
                    return True
                if node not in seen and self._rank[node] > floor and node not in not_after:
                    seen.add(node)
                    queue.append(node)
        # Everything searched precedes ``atom``, so none of it follows ``p``.
        not_after.update(seen)
        return False


def _wanted(atom):
    """Every name TaskFlow looks up for ``atom`` (its execute and revert
    arguments, required or optional)."""
    names = set(atom.rebind.values())
    names.update((getattr(atom, "revert_rebind", None) or {}).values())
    names.update(atom.optional or ())
    names.update(getattr(atom, "revert_optional", None) or ())
    return names


class ScopeWalker(taskflow_compat.ScopeWalker):
    """TaskFlow's scopes of an atom, found from its predecessors, narrowed
    to the atoms that provide a name it looks up.

    A level's scope is the predecessors that sit in a sibling left of the
    atom's branch, nearest sibling first and, inside a sibling flow, in its
    left-to-right depth-first order -- what the stock walker finds by
    scanning all those siblings. TaskFlow only asks an atom's walker for
    the providers of that atom's own arguments (``rebind``, ``optional``
    and their revert counterparts), picking those of the first level that
    has any; the other predecessors, which the stock walker lists too (a
    chain's 500th task lists 499), never answer anything, so they are left
    out. The compilation is frozen, so the scopes are worked out once.
    """

    def __init__(self, compilation, atom, index, names_only=False):
        super().__init__(compilation, atom, names_only=names_only)
        self._hierarchy = compilation.hierarchy
        self._index = index
        self._scopes = None

    def _position(self, parent, item):
        positions = self._index.positions
        index = positions.get(id(parent))
        if index is None:
            index = {}
            for i, child in enumerate(parent):
                index.setdefault(child.item, i)
            positions[id(parent)] = index
        return index[item]

    def _branch(self, parent, atom):
        """The child of ``parent`` that holds ``atom``, if any."""
        node = self._hierarchy.find(atom)
        while node is not None and node.parent is not parent:
            node = node.parent
        return node

    def _levels(self):
        index = self._index
        predecessors = {p for name in _wanted(self.atom) for p in index.providers.get(name, ())
                        if p is not self.atom and index.precedes(p, self.atom)}
        last = self.node
        for parent in self.node.path_iter(include_self=False):
            if not predecessors:
                break
            last_idx = self._position(parent, last.item)
            by_index = {}
            for atom in predecessors:
                branch = self._branch(parent, atom)
                if branch is not None:
                    index = self._position(parent, branch.item)
                    if index < last_idx:
                        by_index.setdefault(index, set()).add(atom)
            visible = []
            for index in sorted(by_index, reverse=True):
                child = parent[index]
                if child.metadata.get("noop"):
                    wanted = by_index[index]
                    visible.extend(node.item for node in child.dfs_iter(right_to_left=False)
                                   if node.item in wanted)
                else:
                    visible.append(child.item)
            predecessors.difference_update(visible)
            yield visible, [atom.name for atom in visible]
            last = parent

    def prime(self):
        if self._scopes is None:
            self._scopes = list(self._levels())

    def __iter__(self):
        self.prime()
        for visible, names in self._scopes:
            # A copy, as the stock walker gives: callers may keep or change it.
            yield list(names if self.names_only else visible)


_DONE_STATES = (states.SUCCESS, states.IGNORE)
_DONE_INTENTIONS = (states.EXECUTE, states.IGNORE)


class Selector(taskflow_compat.Selector):
    """TaskFlow's selector of the atoms to execute next, without its
    quadratic searches.

    An atom may execute when every ancestor is done (succeeded, or ignored).
    After an atom completes, only its descendants reachable through done
    atoms can have become ready: a descendant behind an atom that is not
    done has that atom as an unfinished ancestor. And whether all ancestors
    are done does not depend on the order they are checked in, so a check
    starts with the ancestor that held the atom back last time; the check
    that lets the atom run still looks at every ancestor.

    Looking at every ancestor is itself quadratic along a chain (the 500th
    atom has 499). But an atom found ready had all its ancestors done then,
    and they stay done until an atom is reset (a revert, a retry, a reset
    of the engine: all go through :meth:`_Runtime.reset_atoms`, which bumps
    a generation). So an atom whose parents (its nearest atom ancestors)
    are all done and were all found ready in the current generation is
    ready; only when some parent was not (ignored, or found ready before a
    reset) are all ancestors looked at.
    """

    def __init__(self, runtime_):
        super().__init__(runtime_)
        # atom -> (its parents, index of the one that held it back)
        self._waiting = {}
        # atom -> (its ancestors' names, index of the one that held it back)
        self._waiting_all = {}
        self._parents = {}
        # atom -> the generation in which it was found with every ancestor done
        self._ready_in = {}
        self._generation = 0

    def invalidate(self):
        """Atoms may have stopped being done: forget who was found ready."""
        self._generation += 1

    def _done(self, name):
        state, intention = self.storage.get_atoms_states([name])[name]
        return state in _DONE_STATES and intention in _DONE_INTENTIONS

    def browse_atoms_for_execute(self, atom=None):
        if atom is None:
            yield from super().browse_atoms_for_execute()
            return
        graph = self.execution_graph
        queue = collections.deque(graph.successors(atom))
        seen = set()
        while queue:
            node = queue.popleft()
            if node in seen:
                continue
            seen.add(node)
            if graph.nodes[node]["kind"] in compiler.ATOMS:
                ready, late_decider = self.maybe_ready_for_execute(node)
                if ready:
                    yield node, late_decider
                # Checked after the caller acted on what was yielded: its
                # deciders may have just ignored this atom.
                if not self._done(node.name):
                    continue
            queue.extend(graph.successors(node))

    def maybe_ready_for_execute(self, atom):
        storage = self.storage
        state = storage.get_atom_state(atom.name)
        if not self.runtime.check_atom_transition(atom, state, states.RUNNING):
            return False, None
        if storage.get_atom_intention(atom.name) != states.EXECUTE:
            return False, None
        ready = self._parents_ready(atom)
        if ready is None:
            ready = self._ancestors_done(atom)
        if not ready:
            return False, None
        self._ready_in[atom] = self._generation
        return True, deciders.IgnoreDecider(atom, self.runtime.fetch_edge_deciders(atom))

    def _parents_ready(self, atom):
        """True or False when the parents decide it; None when every
        ancestor must be looked at."""
        parents, start = self._waiting.pop(atom, (None, 0))
        if parents is None:
            parents = self._parents.get(atom)
            if parents is None:
                parents = self._parents[atom] = self._nearest_atom_ancestors(atom)
        for step in range(len(parents)):
            index = (start + step) % len(parents)
            parent = parents[index]
            if not self._done(parent.name):
                self._waiting[atom] = (parents, index)
                return False
            if self._ready_in.get(parent) != self._generation:
                return None
        return True

    def _nearest_atom_ancestors(self, atom):
        # Through flow nodes only: the first atoms met on each path back.
        return list(traversal.depth_first_iterate(
            self.execution_graph, atom, traversal.Direction.BACKWARD,
            through_retries=False, through_tasks=False))

    def _ancestors_done(self, atom):
        ancestors, start = self._waiting_all.pop(atom, (None, 0))
        if ancestors is None:
            ancestors = [node.name for node in traversal.depth_first_iterate(
                self.execution_graph, atom, traversal.Direction.BACKWARD)]
        for step in range(len(ancestors)):
            index = (start + step) % len(ancestors)
            if not self._done(ancestors[index]):
                self._waiting_all[atom] = (ancestors, index)
                return False
        return True


class _Runtime(taskflow_compat.Runtime):
    def reset_atoms(self, atoms, state=states.PENDING, intention=states.EXECUTE):
        if (state, intention) != (states.IGNORE, states.IGNORE):
            # Only ignoring keeps every done atom done.
            self.selector.invalidate()
        return super().reset_atoms(atoms, state=state, intention=intention)

    @functools.cached_property
    def builder(self):
        return builder.MachineBuilder(self, CompletionWaiter())

    @functools.cached_property
    def selector(self):
        return Selector(self)

    def use_fast_scopes(self):
        """Replace every atom's scope walker with :class:`ScopeWalker`."""
        index = ScopeIndex(self.compilation)
        walkers = {}

        def fast(atom, names_only):
            walker = walkers[atom] = ScopeWalker(self.compilation, atom, index,
                                                 names_only=names_only)
            return walker

        self.replace_scope_walkers(fast)
        # In topological order: see ScopeIndex.
        for node in index.order:
            if node in walkers:
                walkers[node].prime()


class StorageLock:
    """The storage's reader/writer lock, as one reentrant lock.

    TaskFlow takes the storage's lock around every storage call (about
    thirty per task: reading arguments, states, intentions, results) and
    fasteners' ``ReaderWriterLock`` does each acquisition in Python under
    a condition variable. Readers only ever ran one at a time anyway
    (they hold the GIL), and no storage call waits for anything while it
    holds the lock, so letting readers exclude each other costs nothing;
    an ``RLock`` keeps what callers rely on: a writer may read, a reader
    may read again.
    """

    def __init__(self):
        self._lock = threading.RLock()

    def read_lock(self):
        return self._lock

    def write_lock(self):
        return self._lock


class ParallelEngine(taskflow_compat.ParallelEngine):
    """TaskFlow's parallel engine, compiling with :class:`PatternCompiler`,
    waiting with :class:`CompletionWaiter`, finding arguments with
    :class:`ScopeWalker` and the next atoms with :class:`Selector`; on a
    journal, saving through :class:`~nestedflow.taskflow.journal_backend.JournalStorage`."""

    def __init__(self, flow, flow_detail, backend, options):
        super().__init__(flow, flow_detail, backend, options)
        self.use_compiler(PatternCompiler(flow))

    @misc.cachedproperty
    def storage(self):
        store = super().storage
        taskflow_compat.use_storage_lock(store, StorageLock())
        if isinstance(self.backend, journal_backend.JournalBackend):
            taskflow_compat.adopt_storage(store, journal_backend.JournalStorage)
        return store

    def run_iter(self, timeout=None):
        compiled = self.compiled_runtime
        if isinstance(compiled, _Runtime):
            # Storage may have been changed between runs.
            compiled.selector.invalidate()
        return super().run_iter(timeout=timeout)

    def prepare(self):
        with collector.paused():
            super().prepare()

    def validate(self):
        with collector.paused():
            super().validate()

    def compile(self):
        with collector.paused():
            super().compile()
            # The stock runtime with only its state machine's waiter
            # replaced; nothing has used its builder yet.
            fast = self.adopt_runtime(_Runtime)
            if fast is not None:
                fast.use_fast_scopes()
