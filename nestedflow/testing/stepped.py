"""Deterministic simulation: traversals stepped one resource action at a time.

This is the "simulation framework" of the convergence design discussion: it
runs the very flows and tasks a conductor runs -- built by
:func:`nestedflow.flows.factories.stack_traversal`, executed by the engine
production runs (``nestedflow-parallel``), writing the real database,
reverting through the real
``revert`` handlers -- but nothing runs until the test says so, so a race
such as "an update arrives after two resources of the create finished" is
reproduced exactly every time::

    sim = Simulation(db_url)
    create = sim.create("s", template)        # queued, nothing ran yet
    sim.run(create, until="create b")         # a and b created
    update = sim.update(create.stack_id, template2)
    sim.run_to_end(update)                    # the update takes over
    sim.run_to_end(create)                    # the old traversal stops
    sim.engine.get_stack(create.stack_id)

How it works. Each traversal's TaskFlow engine is driven from the test's
thread through ``run_iter()``; its task executor is a :class:`_HeldExecutor`
that records every atom TaskFlow submits (an execute or a revert) as a
:class:`WorkItem` instead of running it. :meth:`Simulation.step` runs one
work item on a thread of its own while the test's thread waits: exactly one
thread runs at any moment, so every schedule is reproducible. A work item
hands control back when it finishes or when it *waits*: a resource action
sleeping (``OS::Heat::TestResource`` ``wait_secs``) pauses "in flight" --
other traversals can then be stepped while that action is still running --
and a task waiting for a resource lock pauses until it is stepped again.
Time does not pass: a wait of any length is one pause.

TaskFlow's own progress journal is kept in memory by default
(``persistence="memory"``); ``persistence="sql"`` builds each run through
the runner's public hook (:func:`nestedflow.flows.runner.journaled_engine`)
and so journals into the stack's database through the journal backend,
exactly as the embedded engine and the conductors do.
"""

import dataclasses
import logging
import threading
from concurrent import futures as cf

import futurist
import taskflow.engines
from taskflow import states as tf_states

from nestedflow import exceptions
from nestedflow.db.owners import OwnerToken
from nestedflow.dispatch import base
from nestedflow.engine.service import Engine
from nestedflow.flows import factories, runner, runtime
from nestedflow.taskflow import compat as taskflow_compat
from nestedflow.taskflow import parallel_engine
from nestedflow.taskflow.sql_backend import TaskflowBackend

LOG = logging.getLogger(__name__)


class SimulationError(AssertionError):
    """The schedule a test asked for cannot happen (or nothing can run)."""


class _Abandoned(BaseException):
    """Unwinds a paused work item when its simulation closes."""


class Blocked(SimulationError):
    """Every runnable work item waits for a lock no runnable item will release."""


@dataclasses.dataclass(eq=False)
class WorkItem:
    """One atom execution or revert that TaskFlow submitted and we hold."""

    traversal: "Traversal"
    fn: object
    args: tuple
    kwargs: dict
    future: futurist.Future
    #: "ready" (not started), "paused" (waiting inside), or "done".
    state: str = "ready"
    #: Why a paused item waits: "lock" (a resource lock) or "action" (a
    #: plugin action in flight, e.g. TestResource wait_secs).
    waiting_for: str | None = None
    thread: threading.Thread | None = None
    abandoned: bool = False
    _go: threading.Semaphore = dataclasses.field(default_factory=lambda: threading.Semaphore(0))
    _back: threading.Semaphore = dataclasses.field(
        default_factory=lambda: threading.Semaphore(0))

    @property
    def atom(self):
        return self.args[0]

    @property
    def reverting(self):
        return taskflow_compat.is_revert_call(self.fn)

    @property
    def name(self):
        """``"create b #3"``, ``"revert update a #1"``, ``"begin update"``..."""
        return ("revert " if self.reverting else "") + self.atom.name

    @property
    def label(self):
        """The name without the row id: what tests match on."""
        return self.name.split(" #", 1)[0]

    def matches(self, pattern):
        return pattern in (self.name, self.label) or self.name.startswith(pattern + " #")

    def __repr__(self):
        extra = f" waiting for {self.waiting_for}" if self.state == "paused" else ""
        return f"<{self.name} ({self.traversal.action}) {self.state}{extra}>"


class _HeldExecutor(cf.Executor):
    """A futures executor that runs nothing until the simulation steps it."""

    def __init__(self, traversal):
        self._traversal = traversal

    def submit(self, fn, *args, **kwargs):
        future = futurist.Future()
        item = WorkItem(self._traversal, fn, args, kwargs, future)
        self._traversal.items.append(item)
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        pass


class _SteppedEvent(threading.Event):
    """A traversal's stop event whose waits hand control back to the test."""

    def __init__(self, simulation):
        super().__init__()
        self._simulation = simulation

    def wait(self, timeout=None, waiting_for="action"):
        item = self._simulation._running_item()
        if item is not None and item.abandoned:
            raise _Abandoned(item.name)
        if item is None or self.is_set():
            return self.is_set()
        # Who waits: a task polling a held lock (SteppedRuntime.lock_wait),
        # or a plugin action sleeping through ActionContext.sleep.
        item.waiting_for = waiting_for
        self._simulation._pause(item)
        if item.abandoned:
            raise _Abandoned(item.name)
        return self.is_set()


@dataclasses.dataclass(frozen=True)
class SteppedRuntime(runtime.Runtime):
    """The runtime whose stop events pause work items instead of sleeping."""

    simulation: object = None

    def lock_wait(self, event, timeout):
        return event.wait(timeout, waiting_for="lock")

    def stop_event(self, traversal_id):
        with self._stops_lock:
            event = self._stops.get(traversal_id)
            if event is None:
                event = self._stops[traversal_id] = _SteppedEvent(self.simulation)
            return event


class Traversal:
    """One dispatched traversal: queued, then built and stepped on demand."""

    def __init__(self, simulation, stack_id, traversal_id, action):
        self.simulation = simulation
        self.stack_id = stack_id
        self.traversal_id = traversal_id
        self.action = action
        self.items = []
        #: "queued", "running" or "finished".
        self.state = "queued"
        #: TaskFlow's final state (SUCCESS, REVERTED...), "not started"
        #: when it lost its claim before it began, or the error it raised.
        self.outcome = None
        self.error = None
        self.owner = OwnerToken.anonymous()
        self._engine = None
        #: The run's journal backend (persistence="sql"), closed when it ends.
        self._journal = None
        self._iter = None
        self._fresh_results = False
        self.engine_states = []

    def __repr__(self):
        return f"<Traversal {self.action} {self.traversal_id[:8]} {self.state}>"

    @property
    def finished(self):
        return self.state == "finished"

    def runnable(self):
        return [item for item in self.items if item.state != "done"]

    def names(self):
        """Labels of the work items that can be stepped now, in default order."""
        return [item.name for item in self.simulation._ordered(self.runnable())]

    def done_names(self):
        return [item.name for item in self.items if item.state == "done"]

    def task_names(self):
        """Every task of the traversal's flow (built when it started)."""
        if self._engine is None:
            return []
        return sorted(node.name for node in self._engine.compilation.execution_graph.nodes
                      if node is not None and hasattr(node, "execute"))


class SteppedDispatcher(base.Dispatcher):
    """Queues traversals for a :class:`Simulation`; never runs anything itself."""

    runs_in_process = True

    def __init__(self, simulation):
        self._simulation = simulation
        self._callbacks = []
        self._closed = False

    def dispatch(self, stack_id, traversal_id, action):
        if self._closed:
            raise exceptions.NestedflowError("engine is closed")
        self._simulation._queue(Traversal(self._simulation, stack_id, traversal_id, action))

    def add_done_callback(self, callback):
        self._callbacks.append(callback)

    def notify(self):
        for callback in self._callbacks:
            callback()

    def close(self):
        self._closed = True


class SteppedEngine(Engine):
    """A real :class:`~nestedflow.engine.service.Engine` whose traversals wait
    for a :class:`Simulation` to step them."""

    def __init__(self, *args, simulation, **kwargs):
        self._simulation = simulation
        super().__init__(*args, **kwargs)

    def _make_runtime(self, **fields):
        # Scenarios step and name one resource's action at a time.
        fields["database_only_waves"] = False
        return SteppedRuntime(**fields, simulation=self._simulation)

    def _make_dispatcher(self):
        dispatcher = SteppedDispatcher(self._simulation)
        self._simulation.dispatcher = dispatcher
        return dispatcher

    def wait(self, stack_id, timeout=None):
        """Run every queued traversal to its end (default order); the stack."""
        self._simulation.settle()
        return self.get_stack(stack_id)


class Simulation:
    """Drives an :class:`SteppedEngine` one work item at a time.

    ``order`` picks among runnable work items when a test does not name one:
    the default runs them sorted by name (resource name, then row id), which
    is deterministic, unlike TaskFlow's own scheduling order.
    """

    def __init__(self, db_url, *, persistence="memory", order=None, **engine_kwargs):
        if persistence not in ("memory", "sql"):
            raise ValueError("persistence is 'memory' or 'sql'")
        self.persistence = persistence
        self.traversals = []
        self._order = order or (lambda items: sorted(items, key=lambda i: i.name))
        self._local = threading.local()
        self.log = []
        #: The engine's dispatcher (set when the engine builds it).
        self.dispatcher = None
        self.engine = SteppedEngine(db_url, simulation=self, **engine_kwargs)
        # TaskFlow's SQL persistence on the stacks' database, for
        # persistence="sql" (the engine's own is the journal of its runs).
        self._backend = (TaskflowBackend.for_database(self.engine.db)
                         if persistence == "sql" else None)

    @property
    def rt(self):
        return self.engine.runtime

    def close(self):
        for traversal in self.traversals:
            if traversal.state == "running":
                self._abandon(traversal)
        self.engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- issuing operations: each returns the traversal it dispatched -------

    def create(self, name, template, **kwargs):
        self.engine.create_stack(name, template, **kwargs)
        return self.traversals[-1]

    def update(self, stack_id, template, **kwargs):
        self.engine.update_stack(stack_id, template, **kwargs)
        return self.traversals[-1]

    def delete(self, stack_id):
        self.engine.delete_stack(stack_id)
        return self.traversals[-1]

    def suspend(self, stack_id):
        self.engine.suspend_stack(stack_id)
        return self.traversals[-1]

    def resume(self, stack_id):
        self.engine.resume_stack(stack_id)
        return self.traversals[-1]

    def check(self, stack_id):
        self.engine.check_stack(stack_id)
        return self.traversals[-1]

    def cancel(self, stack_id, rollback=True):
        """Cancel the create/update in progress (no new traversal)."""
        return self.engine.cancel_update(stack_id, rollback=rollback)

    def _queue(self, traversal):
        self.traversals.append(traversal)

    # -- stepping -----------------------------------------------------------

    def start(self, traversal):
        """Claim the traversal and build its flow (what a worker does first)."""
        if traversal.state != "queued":
            return traversal
        traversal.state = "running"
        rt = self.rt
        try:
            stack = rt.db.claim_traversal(traversal.stack_id, traversal.traversal_id,
                                          traversal.owner)
        except exceptions.NestedflowError as error:
            self._finish(traversal, "not started", error)
            return traversal
        rt.started(traversal.owner)
        try:
            with runtime.installed(rt, traversal.owner):
                kwargs = {"stack_id": traversal.stack_id,
                          "traversal_id": traversal.traversal_id, "action": traversal.action}
                if self._backend is not None:
                    # What a run does, through the runner's own hook: the
                    # production engine journaling through the journal backend.
                    traversal._engine, traversal._journal, _ = runner.journaled_engine(
                        rt, self._backend, kwargs, traversal.owner, stack, first_run=True,
                        executor=_HeldExecutor(traversal))
                else:
                    # The same engine, with TaskFlow's journal in memory.
                    traversal._engine = taskflow.engines.load_from_factory(
                        factories.stack_traversal, factory_kwargs=kwargs,
                        engine=parallel_engine.ENGINE, executor=_HeldExecutor(traversal))
                runner.announce_rollback(rt, traversal._engine, traversal.stack_id,
                                          traversal.traversal_id, traversal.owner)
                # timeout=0: TaskFlow's wait polls the held futures and returns.
                traversal._iter = traversal._engine.run_iter(timeout=0)
        except Exception as error:
            self._flow_failed(traversal, error)
            return traversal
        self._pump(traversal)
        return traversal

    def step(self, traversal, name=None):
        """Run one work item of ``traversal`` until it finishes or waits.

        ``name`` picks it (``"create b"``, ``"revert update a"``,
        ``"cleanup a #1"``); by default the first in :attr:`order`.
        Returns the item.
        """
        self.start(traversal)
        items = self._ordered(traversal.runnable())
        if name is not None:
            items = [item for item in items if item.matches(name)]
        if not items:
            raise SimulationError(
                f"{traversal!r}: nothing to step{' named ' + repr(name) if name else ''}; "
                f"runnable: {traversal.names()}; done: {traversal.done_names()}")
        item = items[0]
        self._resume(item)
        return item

    def run(self, traversal, until, *, paused=False):
        """Step ``traversal`` (default order) until the work item matching
        ``until`` has finished -- or, with ``paused``, waits in flight."""
        self.start(traversal)
        while True:
            for item in traversal.items:
                if item.matches(until) and (item.state == "done" or paused and (
                        item.state, item.waiting_for) == ("paused", "action")):
                    return item
            if traversal.finished:
                raise SimulationError(
                    f"{traversal!r} ended ({traversal.outcome}) without {until!r}; "
                    f"done: {traversal.done_names()}")
            self._advance([traversal])

    def run_to_end(self, *traversals):
        """Step these traversals (the first before the next) until each has finished."""
        for traversal in traversals:
            self.start(traversal)
            while not traversal.finished:
                self._advance([traversal])
        return traversals[-1] if traversals else None

    def settle(self):
        """Run every traversal to its end: the oldest one's work first."""
        while True:
            live = [t for t in self.traversals if not t.finished]
            if not live:
                return
            self._advance(live)

    def _advance(self, traversals):
        """Step one work item of the first of ``traversals`` that can progress.

        An item waiting for a lock is only retried when nothing else can
        run; if every retry waits again, nothing ever will (the holder is
        paused in a traversal not in ``traversals``, or leaked the lock).
        """
        for traversal in traversals:
            self.start(traversal)
        items = [i for t in traversals for i in self._ordered(t.runnable())]
        if not items:
            if all(t.finished for t in traversals):
                return
            raise Blocked(f"{traversals!r}: nothing to run but not finished")
        free = [i for i in items if (i.state, i.waiting_for) != ("paused", "lock")]
        if free:
            self._resume(free[0])
            return
        for item in items:
            self._resume(item)
            if (item.state, item.waiting_for) != ("paused", "lock"):
                return
        raise Blocked(f"{[i.name for i in items]} wait for resource locks that nothing "
                      f"runnable will release; {self._lock_holders(traversals)}")

    def _lock_holders(self, traversals):
        rows = []
        for t in traversals:
            rows += [f"{r.name}#{r.id} held by {r.engine_id}"
                     for r in self.rt.db.list_all_resources(t.stack_id) if r.engine_id]
        return "locks: " + (", ".join(sorted(set(rows))) or "none")

    def _ordered(self, items):
        return list(self._order(list(items)))

    # -- the baton -----------------------------------------------------------

    def _running_item(self):
        return getattr(self._local, "item", None)

    def _resume(self, item):
        traversal = item.traversal
        self.log.append((traversal.action, traversal.traversal_id, item.name))
        if item.state == "ready":
            item.state = "running"
            item.thread = threading.Thread(target=self._work, args=(item,),
                                           name=f"sim {item.name}", daemon=True)
            item.thread.start()
        else:
            item.state = "running"
            item.waiting_for = None
        item._go.release()
        item._back.acquire()
        if item.state == "done":
            traversal._fresh_results = True
            self._pump(traversal)

    def _work(self, item):
        item._go.acquire()
        self._local.item = item
        try:
            result = item.fn(*item.args, **item.kwargs)
        except _Abandoned:
            item.state = "done"
            _cancel(item.future)
        except BaseException as error:  # TaskFlow wraps task errors; this is ours
            item.state = "done"
            item.future.set_exception(error)
        else:
            item.state = "done"
            item.future.set_result(result)
        finally:
            self._local.item = None
            item._back.release()

    def _pause(self, item):
        item.state = "paused"
        item._back.release()
        item._go.acquire()

    def _pump(self, traversal):
        """Advance the TaskFlow engine until it waits on held work or ends."""
        if traversal._iter is None or traversal.finished:
            return
        while True:
            try:
                state = next(traversal._iter)
            except StopIteration:
                self._finish(traversal, traversal.engine_states[-1]
                             if traversal.engine_states else None)
                return
            except Exception as error:
                # After reverting, TaskFlow re-raises the task failures.
                self._flow_failed(traversal, error)
                return
            traversal.engine_states.append(state)
            if state == tf_states.ANALYZING:
                # The wait before it collected every finished future.
                traversal._fresh_results = False
            elif state == tf_states.WAITING and not traversal._fresh_results:
                if any(item.state != "done" for item in traversal.items):
                    return

    def _flow_failed(self, traversal, error):
        runner.settle_if_unsettled(self.rt, traversal.stack_id, traversal.traversal_id,
                                    traversal.owner, error)
        self._finish(traversal, traversal.engine_states[-1]
                     if traversal.engine_states else "FAILURE", error)

    def _finish(self, traversal, outcome, error=None):
        if traversal._journal is not None:
            try:
                traversal._journal.close()
            except exceptions.NestedflowError as journal_error:  # fenced: a newer run owns it
                LOG.info("traversal %s: journal not flushed: %s", traversal.traversal_id,
                         journal_error)
        traversal.state = "finished"
        traversal.outcome = outcome
        traversal.error = error
        self.rt.finished(traversal.owner)
        self.rt.forget(traversal.traversal_id)
        self.dispatcher.notify()

    def _abandon(self, traversal):
        """Close with ``traversal`` unfinished: unwind its paused work items
        (one at a time, as every step) and stop its TaskFlow engine here --
        left to the garbage collector, the engine's generator would go on
        running in whatever thread happened to collect it."""
        for item in traversal.items:
            if item.state == "paused":
                item.abandoned = True
                item._go.release()
                item._back.acquire()
            elif item.state == "ready":
                item.state = "done"
                _cancel(item.future)
        if traversal._iter is not None:
            try:
                traversal._iter.close()
            except BaseException as error:  # noqa: B036 -- it is being discarded
                LOG.debug("abandoned %r: %s", traversal, error)
        self._finish(traversal, "abandoned")


def _cancel(future):
    """Cancel a held future so that waiters see it done (as an executor's
    worker would: a future only counts as done once "notified")."""
    future.cancel()
    future.set_running_or_notify_cancel()
