"""Every use nestedflow makes of TaskFlow's private names, in one place.

TaskFlow's engine is quadratic in the size of a flow in several places
(doc/source/architecture.rst, "TaskFlow adapter", lists them with the
measurements); :mod:`nestedflow.taskflow.parallel_engine` replaces those parts, and the
journal (:mod:`nestedflow.taskflow.journal_backend`) and the jobboard
(:mod:`nestedflow.taskflow.jobboard`) tune others. TaskFlow offers no public
hook for any of it, so the classes here turn each private hook into a
public method or property of a subclass, and every other module uses those.

A TaskFlow release that renames or drops one of these names would break
nestedflow silently (an override no longer called, an attribute set that
nothing reads). :func:`nestedflow.dependency_check.check` -- run when this
module is imported, and for the jobboard's names when
:mod:`nestedflow.taskflow.jobboard` is -- fails at once instead, naming the
missing name and :data:`SUPPORTED`.
"""

import operator

from taskflow import flow as tf_flow
from taskflow import storage as tf_storage
from taskflow import task as tf_task
from taskflow.engines.action_engine import compiler, engine, runtime, scopes, selector

from nestedflow import dependency_check

#: The TaskFlow versions these hooks were written for and tested with
#: (setup.cfg bounds the requirement to the same range).
SUPPORTED = "taskflow>=6.5,<7"

#: (module, class or None for a module function, name) of every private
#: name of the engine, storage and atoms used here.
ENGINE_NAMES = (
    # Atom: arguments are mapped from a signature (ScopedTask.inspected).
    ("taskflow.atom", "Atom", "_build_arg_mapping"),
    # Compiler: how a flow's children are compiled, and by which compiler.
    ("taskflow.engines.action_engine.compiler", "FlowCompiler", "_deep_compiler_func"),
    ("taskflow.engines.action_engine.compiler", "PatternCompiler", "_matchers"),
    ("taskflow.engines.action_engine.compiler", "PatternCompiler", "_compile"),
    # Selector: what runs next after an atom completes.
    ("taskflow.engines.action_engine.selector", "Selector", "_browse_atoms_for_execute"),
    ("taskflow.engines.action_engine.selector", "Selector", "_get_maybe_ready_for_execute"),
    ("taskflow.engines.action_engine.selector", "Selector", "_storage"),
    ("taskflow.engines.action_engine.selector", "Selector", "_execution_graph"),
    ("taskflow.engines.action_engine.selector", "Selector", "_runtime"),
    # Scope walkers: where an atom's arguments come from.
    ("taskflow.engines.action_engine.scopes", "ScopeWalker", "_atom"),
    ("taskflow.engines.action_engine.scopes", "ScopeWalker", "_node"),
    ("taskflow.engines.action_engine.scopes", "ScopeWalker", "_names_only"),
    ("taskflow.engines.action_engine.runtime", "Runtime", "_atom_cache"),
    # The engine's compiler, runtime and backend.
    ("taskflow.engines.action_engine.engine", "ActionEngine", "_compiler"),
    ("taskflow.engines.action_engine.engine", "ActionEngine", "_compiled"),
    ("taskflow.engines.action_engine.engine", "ActionEngine", "_runtime"),
    ("taskflow.engines.base", "Engine", "_backend"),
    # Storage: its lock, and the saves a journal need not retry.
    ("taskflow.storage", "Storage", "_lock"),
    ("taskflow.storage", "Storage", "_atomdetail_by_name"),
    ("taskflow.storage", "Storage", "_save_flow_detail"),
    ("taskflow.storage", "Storage", "_save_atom_detail"),
    # The executor's revert entry point (the deterministic simulator).
    ("taskflow.engines.action_engine.executor", None, "_revert_task"),
)

def exposed(private, doc):
    """A read-only property giving TaskFlow's attribute ``private``."""
    return property(operator.attrgetter(private), doc=doc)


class Task(tf_task.Task):
    """A task that chooses what TaskFlow inspects for its arguments."""

    def inspected(self, method):
        """What stands for ``method`` (execute or revert) when TaskFlow
        derives its arguments from a signature: ``method`` by default."""
        return method

    def _build_arg_mapping(self, executor, *args, **kwargs):
        return super()._build_arg_mapping(self.inspected(executor), *args, **kwargs)


class FlowCompiler(compiler.FlowCompiler):
    """TaskFlow's flow compiler, with the compilation of a child public."""

    def compile_child(self, child, parent):
        """The graph of ``child`` (a flow or an atom) under ``parent``."""
        return self._deep_compiler_func(child, parent=parent)[0]


class PatternCompiler(compiler.PatternCompiler):
    """TaskFlow's pattern compiler, compiling flows with ``flow_compiler``
    (a :class:`FlowCompiler` subclass) and tasks as it does."""

    def __init__(self, root, flow_compiler, freeze=True):
        super().__init__(root, freeze=freeze)
        self._matchers = [
            (tf_flow.Flow, flow_compiler(self._compile)),
            (tf_task.Task, compiler.TaskCompiler()),
        ]


class Selector(selector.Selector):
    """TaskFlow's selector with its hooks and state public."""

    storage = exposed("_storage", "The engine's storage (atom states, results).")
    execution_graph = exposed("_execution_graph", "The compiled flow's graph.")
    runtime = exposed("_runtime", "The engine's runtime.")

    def browse_atoms_for_execute(self, atom=None):
        """The atoms that may execute now: all of them, or after ``atom``
        completed (TaskFlow's search by default)."""
        return selector.Selector._browse_atoms_for_execute(self, atom=atom)

    def maybe_ready_for_execute(self, atom):
        """(ready, late decider) of ``atom`` (TaskFlow's check by default)."""
        return selector.Selector._get_maybe_ready_for_execute(self, atom)

    def _browse_atoms_for_execute(self, atom=None):
        return self.browse_atoms_for_execute(atom)

    def _get_maybe_ready_for_execute(self, atom):
        return self.maybe_ready_for_execute(atom)


class ScopeWalker(scopes.ScopeWalker):
    """TaskFlow's scope walker with what it walks for public."""

    atom = exposed("_atom", "The atom whose scopes are walked.")
    node = exposed("_node", "The atom's node in the compiled hierarchy.")
    names_only = exposed("_names_only", "Whether scopes list names, not atoms.")


class Runtime(runtime.Runtime):
    """TaskFlow's engine runtime, whose scope walkers can be replaced."""

    def replace_scope_walkers(self, make):
        """Give every atom ``make(atom, names_only)`` as its scope walker,
        in place of TaskFlow's own (built with those arguments)."""
        for metadata in self._atom_cache.values():
            stock = metadata["scope_walker"]
            metadata["scope_walker"] = make(stock._atom, stock._names_only)


class ParallelEngine(engine.ParallelActionEngine):
    """TaskFlow's parallel engine with its compiler, runtime and storage
    replaceable."""

    def use_compiler(self, pattern_compiler):
        """Compile with ``pattern_compiler`` (before :meth:`compile`)."""
        self._compiler = pattern_compiler

    backend = exposed("_backend", "The persistence backend the engine journals in.")

    @property
    def compiled_runtime(self):
        """The runtime once compiled, else None."""
        return self._runtime if self._compiled else None

    def adopt_runtime(self, runtime_class):
        """Make the stock runtime just compiled a ``runtime_class`` (a
        :class:`Runtime` subclass adding no state of its own); returns it,
        or None when the runtime is not TaskFlow's stock one."""
        if type(self._runtime) is not runtime.Runtime:
            return None
        self._runtime.__class__ = runtime_class
        return self._runtime


def use_storage_lock(storage, lock):
    """Guard ``storage`` with ``lock`` (read_lock() and write_lock())."""
    storage._lock = lock


def adopt_storage(storage, storage_class):
    """Make ``storage`` (TaskFlow's Storage) a ``storage_class``, a subclass
    adding no state of its own."""
    storage.__class__ = storage_class


class Storage(tf_storage.Storage):
    """TaskFlow's storage with its two saves, its lock and its atom details public."""

    lock = exposed("_lock", "The storage's lock (read_lock() and write_lock()).")

    def atom_detail(self, atom_name):
        """The atom's detail as the storage holds it (not a copy)."""
        return self._atomdetail_by_name(atom_name)[0]

    def save_flow_detail(self, conn, original, flow_detail):
        return tf_storage.Storage._save_flow_detail(self, conn, original, flow_detail)

    def save_atom_detail(self, conn, original, atom_detail):
        return tf_storage.Storage._save_atom_detail(self, conn, original, atom_detail)

    def _save_flow_detail(self, conn, original_flow_detail, flow_detail):
        return self.save_flow_detail(conn, original_flow_detail, flow_detail)

    def _save_atom_detail(self, conn, original_atom_detail, atom_detail):
        return self.save_atom_detail(conn, original_atom_detail, atom_detail)


def is_revert_call(function):
    """Is ``function``, submitted to a task executor, a task's revert?"""
    from taskflow.engines.action_engine import executor

    return function is executor._revert_task


dependency_check.check(ENGINE_NAMES, SUPPORTED, "taskflow")
