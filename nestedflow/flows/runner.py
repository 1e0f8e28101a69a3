"""Runs one traversal's flow with TaskFlow's parallel engine.

The embedded engine and conductors both come through here, so a flow
behaves the same wherever it runs: the flow detail records the factory
name and arguments (TaskFlow's own resumption data) in a logbook per stack.
"""

import contextlib
import logging
import threading

import taskflow.engines
from taskflow import exceptions as tf_exceptions
from taskflow import states as tf_states
from taskflow.persistence import models as tf_models

from nestedflow import exceptions, states
from nestedflow.db.owners import OwnerToken
from nestedflow.flows import factories, journal, log_filters, runtime
from nestedflow.taskflow import journal_backend as journal_backends
from nestedflow.taskflow import parallel_engine as tf_engine

LOG = logging.getLogger(__name__)

log_filters.install()


def logbook_for(backend, stack_id):
    """The stack's logbook (one per stack; one flow detail per traversal run).

    Loaded without its flow details: those only grow, and adding one to
    the logbook only needs the logbook itself.
    """
    with contextlib.closing(backend.get_connection()) as conn:
        try:
            return conn.get_logbook(stack_id, lazy=True)
        except tf_exceptions.NotFound:
            book = tf_models.LogBook(journal.book_name(stack_id), uuid=stack_id)
            return conn.save_logbook(book)


def flow_meta(factory_name, kwargs, run, owner):
    """A flow detail's meta: TaskFlow's own factory record plus which run it is."""
    return {
        "factory": {"name": factory_name, "args": [], "kwargs": dict(kwargs)},
        "traversal_id": kwargs["traversal_id"],
        "run": run,
        "owner": owner,
    }


def run_traversal(rt, backend, stack_id, traversal_id, action, owner=None, *, resume=False,
                  on_engine=None, first_run=False):
    """Claim the traversal, then build and run its flow; the flow settles the stack.

    ``owner`` identifies this run (a conductor passes its job claim); the
    claim fences any earlier run of the same traversal.

    Every run journals into a flow detail of its own that starts from the
    latest earlier run's progress, written behind the engine and fenced on
    ``owner`` (see :mod:`nestedflow.taskflow.journal_backend`).

    ``resume`` (conductors) leaves an unexpected error to the caller
    instead of failing the stack: a conductor retries the job elsewhere, a
    bounded number of times.

    ``first_run`` says no earlier run of the traversal can have journaled
    anything (the embedded engine runs each traversal it dispatches once),
    so there is nothing to look up to resume from.

    ``on_engine(engine)`` is called before the engine runs (a conductor
    keeps it to suspend it); if it returns False the run stops there and
    the traversal stays claimed by ``owner`` for a later run to resume.
    """
    owner = owner or OwnerToken.anonymous()
    try:
        stack = rt.db.claim_traversal(stack_id, traversal_id, owner)
    except exceptions.NestedflowError as error:
        LOG.info("stack %s traversal %s not started: %s", stack_id, traversal_id, error)
        return
    rt.started(owner)
    kwargs = {"stack_id": stack_id, "traversal_id": traversal_id, "action": action}
    journal_backend = executor = None
    try:
        with runtime.installed(rt, owner):
            engine, journal_backend, executor = journaled_engine(rt, backend, kwargs, owner,
                                                                 stack, first_run)
            announce_rollback(rt, engine, stack_id, traversal_id, owner)
            if on_engine is not None and on_engine(engine) is False:
                return
            engine.run()
            # What the run did is durable before the run counts as ended.
            journal_backend.close()
    except Exception as error:
        # TaskFlow re-raises the task failures after reverting (the flow has
        # settled the stack then); anything else -- a flow that could not be
        # built -- must not leave the stack IN_PROGRESS for ever.
        # A fenced run's end is reported once, by whoever ran it (the
        # conductor's WARNING names the new owner).
        LOG.log(logging.DEBUG if isinstance(error, exceptions.OwnershipLost) else logging.INFO,
                "stack %s traversal %s ended: %s", stack_id, traversal_id, error)
        if resume:
            if _unsettled_owner(rt, stack_id, traversal_id, owner):
                raise
        else:
            settle_if_unsettled(rt, stack_id, traversal_id, owner, error)
    finally:
        if journal_backend is not None:
            try:
                journal_backend.close()
            except Exception as error:  # fenced, or the database went away
                LOG.log(logging.DEBUG if isinstance(error, exceptions.OwnershipLost)
                        else logging.INFO, "stack %s traversal %s: journal not flushed: %s",
                        stack_id, traversal_id, error)
        # Every task has finished once the engine returns: the next run
        # may have the pool's threads.
        if executor is not None:
            rt.pools.give_back(*executor)
        rt.finished(owner)
        rt.forget(traversal_id)


def journaled_engine(rt, backend, kwargs, owner, stack, first_run, executor=None):
    """The run's engine (``nestedflow-parallel``), journaling into a flow
    detail of its own that starts from the latest earlier run's progress
    (none for a first run); its journal backend; and the pool its actions
    run in with its size (to give back to ``rt.pools``), or None when the
    caller brings its ``executor``. ``stack`` is the row the claim returned.

    Public for whoever runs a traversal its own way: the deterministic
    simulator (:mod:`nestedflow.testing.stepped`) holds every action in its
    executor and steps the very engine and journal production runs."""
    stack_id, traversal_id = kwargs["stack_id"], kwargs["traversal_id"]
    journal_backend = journal_backends.JournalBackend(
        backend, backend.engine, journal.owner_fence(rt.db, stack_id, traversal_id, owner),
        redact=journal.redacted)
    try:
        flow = factories.stack_traversal(**kwargs, stack=stack)
        # Read after our claim: the run we fenced can no longer change it.
        previous = (None if first_run
                    else journal.latest_detail(journal_backend, stack_id, traversal_id))
        if previous is not None:
            journal.restore_results(previous, lambda: rt.db.list_all_resources(stack_id),
                                    traversal_id)
        run = (previous.meta or {}).get("run", 0) + 1 if previous is not None else 1
        meta = flow_meta(factories.TRAVERSAL, kwargs, run, owner)
        if previous is not None:
            meta["resumed_from"] = previous.uuid
            if run > 1:
                LOG.info("stack %s traversal %s: run %d resumes run %d (%s)", stack_id,
                         traversal_id, run, run - 1, previous.state or "not started")
        # With the flow's atoms: the run's journal starts in one transaction,
        # written behind like the rest of it.
        detail = journal.copy_forward(journal_backend, stack_id, previous,
                                      f"{flow.name} (run {run})", meta, flow=flow,
                                      behind=True)
        waits = sum(1 for node, _ in flow.iter_nodes()
                    if getattr(node, "waits_for_stacks", False))
        if executor is not None:
            return (taskflow.engines.load(flow, flow_detail=detail, backend=journal_backend,
                                          engine=tf_engine.ENGINE, executor=executor),
                    journal_backend, None)
        size = (rt.max_workers, min(waits, rt.max_nested_waits))
        pool = rt.pools.take(*size)
        try:
            engine = taskflow.engines.load(flow, flow_detail=detail, backend=journal_backend,
                                           engine=tf_engine.ENGINE, executor=pool)
        except BaseException:
            rt.pools.give_back(pool, *size)
            raise
    except BaseException:
        journal_backend.close()
        raise
    return engine, journal_backend, (pool, *size)


def _unsettled_owner(rt, stack_id, traversal_id, owner):
    """Whether ``owner`` still runs the traversal and the stack has not settled."""
    try:
        stack = rt.db.get_stack(stack_id)
    except exceptions.StackNotFound:
        return False
    return (stack.current_traversal == traversal_id and stack.traversal_owner == owner
            and stack.status == states.IN_PROGRESS)


def announce_rollback(rt, engine, stack_id, traversal_id, owner):
    """Say ROLLBACK_IN_PROGRESS once the first task of a failed create or
    update with rollback starts reverting.

    TaskFlow 6.5 never moves the flow itself to REVERTING (its flow
    notifier only hears the final state), so the first task revert is the
    moment the rollback begins. As Heat's convergence ``Stack.rollback``
    (heat/engine/stack.py) does, the stack says "Stack ROLLBACK started"
    with an event while the resources are put back.
    """
    announced = threading.Event()

    def on_reverting(state, details):
        if announced.is_set():
            return
        announced.set()
        stack = rt.db.get_stack(stack_id)
        if states.RUNS_AS.get(stack.action, stack.action) not in (states.CREATE, states.UPDATE) or (
                stack.status != states.IN_PROGRESS):
            return
        rollback = (stack.cancel_requested == states.CANCEL_ROLLBACK if stack.cancel_requested
                    else not stack.disable_rollback)
        if not rollback:
            return
        try:
            rt.db.set_stack_state(stack_id, traversal_id, states.ROLLBACK, states.IN_PROGRESS,
                                  f"Stack {states.ROLLBACK} started", owner=owner)
        except exceptions.OwnershipLost:
            pass

    engine.atom_notifier.register(tf_states.REVERTING, on_reverting)


def settle_if_unsettled(rt, stack_id, traversal_id, owner, error):
    """Fail the stack with ``error`` if its flow failed before settling it
    (the run still owning the traversal). Public, with announce_rollback,
    for whoever drives a flow's engine step by step (testing.stepped)."""
    try:
        stack = rt.db.get_stack(stack_id)
    except exceptions.StackNotFound:
        return
    if stack.current_traversal != traversal_id or stack.status != states.IN_PROGRESS:
        return
    try:
        rt.db.set_stack_state(stack_id, traversal_id, stack.action, states.FAILED, str(error),
                              owner=owner)
    except exceptions.OwnershipLost:
        pass
