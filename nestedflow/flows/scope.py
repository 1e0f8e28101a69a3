"""The state every task of one run of one traversal shares: ownership
checks, resource locks, the deadline, and the writes of a locked row.

Each task re-checks ownership before it acts -- the stack's current
traversal, this run's claim on it, and the resource lock -- because it may
be re-run after a crash or run by a conductor that was paused while another
took over.
"""

import contextlib
import datetime
import logging
import uuid

from nestedflow import exceptions, states, tenancy
from nestedflow.db import models
from nestedflow.db.owners import OwnerToken
from nestedflow.db.resources import run_start
from nestedflow.db.software_config import SoftwareConfigStore
from nestedflow.flows import hooks
from nestedflow.flows.check_runner import CheckRunner
from nestedflow.pools import parking, workers
from nestedflow.resources import base, external
from nestedflow.stacks.children import ChildStacks
from nestedflow.stacks.signals import SignalBox

LOG = logging.getLogger(__name__)

#: Traversals a stack's ``timeout`` applies to (as in Heat: a rollback, a
#: delete and the other actions are not cut short).
TIMED_ACTIONS = (states.CREATE, states.UPDATE)


#: attr_data key: the idempotency key of the create in progress (or failed).
CREATE_KEY = "create_key"


def create_key(row_id, traversal_id):
    """The idempotency key of a create of row ``row_id`` by ``traversal_id``."""
    return f"{row_id}:{traversal_id}"


def replacement_key(original_id, traversal_id):
    """The idempotency key of the create of a new replacement of row
    ``original_id``: its own, known before its row is inserted.

    Not its row's id (none before the insert; writing the key afterwards
    cost an UPDATE a replacement) and not derived from the original alone:
    a takeover may replace the same original again in the same traversal
    (its first replacement's create cut short), and two replacements
    sharing a key would adopt, then clean up, one object.
    """
    return create_key(f"{original_id}~{uuid.uuid4().hex}", traversal_id)


class TraversalScope:
    """Shared by every task of one run of one traversal of one stack."""

    def __init__(self, runtime, stack, traversal_id, action, definition=None, owner=None,
                 shown_action=None):
        self.runtime = runtime
        self.db = runtime.db
        self.stack = stack
        self.traversal_id = traversal_id
        #: What the flow does (CREATE for an adopt, UPDATE for a restore).
        self.action = action
        #: The stack's action as stored and shown (states.RUNS_AS).
        self.shown_action = shown_action if shown_action in states.RUNS_AS else action
        self.definition = definition
        self.owner = owner
        # Lock holder: this run of the traversal. A later run (resume after a
        # crash) re-claims the stack and so may take over these locks.
        self.holder = OwnerToken.lock_holder(traversal_id, owner)
        self.stop_event = runtime.stop_event(traversal_id)
        #: When a timed create or update must have settled (UTC), else None.
        self.deadline = None
        if stack.timeout and action in TIMED_ACTIONS:
            started = self.db.traversal_started_at(stack, traversal_id)
            self.deadline = started + datetime.timedelta(minutes=stack.timeout)
            runtime.stop_at(traversal_id, self.deadline)
        #: Set once cleanup deleted something: from then on there is no way back.
        self.cleanup_started = False
        #: Pre- and post-checks of the resource actions (nestedflow.checks).
        self.checks = CheckRunner(self)
        #: Resource row id -> whether this run's converge task left that
        #: row current (kept or updated in place) rather than replaced: its
        #: cleanup then has nothing to do and need not read it. A run
        #: resumed after a crash does not know the converges done before.
        self.converged = {}
        #: A re-run's or continue's plan (nestedflow.db.plans), else None.
        self.plan = None
        #: (resource name, type) -> :meth:`in_database_only`'s answer.
        self._database_only = {}
        # Per task run (TaskFlow runs each task in its own worker thread):
        # whether it is a revert, and the locks it holds.
        # Per task, not per thread: tasks parked on one thread (Heat-style
        # polls, nestedflow.pools.parking) interleave on it.
        self._task = parking.TaskLocal()

    # -- per task -----------------------------------------------------------

    def begin_task(self, reverting=False):
        self._task.reverting = reverting
        self._task.held = set()

    def end_task(self):
        """Release any lock the task still holds: a task that failed half-way
        must not leave its resources locked for the next traversal."""
        held = getattr(self._task, "held", set())
        self._task.held = set()
        self._task.reverting = False
        for row_id in sorted(held):
            try:
                self.db.release_lock(row_id, self.holder)
            except Exception:  # never fail the engine from a post-task hook
                LOG.exception("could not release the lock of resource row %s", row_id)

    @property
    def reverting(self):
        return getattr(self._task, "reverting", False)

    def mark_held(self, row_id, held):
        locks = getattr(self._task, "held", None)
        if locks is None:
            locks = self._task.held = set()
        (locks.add if held else locks.discard)(row_id)

    def wait_event(self):
        """What waits of this task watch: a cancel cuts an action short but
        must not cut short the revert that undoes it."""
        if self.reverting:
            return self.runtime.stop_event(self.revert_key)
        return self.stop_event

    @property
    def revert_key(self):
        return f"{self.traversal_id}/revert"

    # -- ownership ----------------------------------------------------------

    def check_deadline(self):
        """Raise once a timed traversal is past its deadline (reverts go on)."""
        if self.deadline is not None and not self.reverting and (
                models.utcnow() >= self.deadline):
            raise exceptions.StackTimedOut(self.action, self.stack.timeout)

    def seconds_left(self):
        """Until the deadline (None: no deadline applies to this task)."""
        if self.deadline is None or self.reverting:
            return None
        return max(0.0, (self.deadline - models.utcnow()).total_seconds())

    def check_owner(self, stack=None):
        """Raise unless this run still owns the traversal and may start
        actions; ``stack`` is a row read just now, checked instead of
        reading the stack again."""
        self.check_deadline()
        if stack is not None:
            current, owner, cancel = (stack.current_traversal, stack.traversal_owner,
                                      stack.cancel_requested)
        else:
            current, owner, cancel, _ = self.db.ownership(self.stack.id)
        # No new action once superseded; actions in flight finish (their
        # results are kept and the new traversal converges from them).
        if current != self.traversal_id or (self.owner and owner != self.owner):
            raise exceptions.TraversalSuperseded(self.stack.id, self.traversal_id)
        # A cancel stops new actions; the reverts it asked for must go on.
        if cancel and not self.reverting:
            raise exceptions.Cancelled(f"Stack {self.action} cancelled")

    def is_owner(self):
        current, owner, _, _ = self.db.ownership(self.stack.id)
        return current == self.traversal_id and (not self.owner or owner == self.owner)

    @property
    def converging(self):
        """Does this traversal bring the stack to a template (update, or the
        convergence pass of a rollback)?"""
        return self.action in (states.UPDATE, states.ROLLBACK)

    def rollback_enabled(self):
        if self.cleanup_started or self.action not in (states.CREATE, states.UPDATE):
            return False
        if self.plan is not None:
            return False  # a re-run or continue repairs; it never rolls back
        _, _, cancel, disable_rollback = self.db.ownership(self.stack.id)
        if cancel:
            return cancel == states.CANCEL_ROLLBACK
        return not disable_rollback

    def may_steal(self, row):
        """Is the lock on ``row`` stale (its holder fenced or dead)?"""
        traversal, _ = OwnerToken(row.engine_id or "").holder_parts
        if traversal == self.traversal_id:
            # An earlier run of this same traversal: our claim fenced it.
            return True
        return not self.runtime.holder_alive(row)

    def lock(self, row_id, start=None):
        """Take the resource lock, waiting while a live holder finishes its action.

        ``start(row)``: the state to record once locked (values for
        :meth:`set_state`'s write, or None), in the lock's own transaction
        when the lock is free; or a list of writes
        (:meth:`Database.try_lock_resource`), the last of which may release
        the lock (``engine_id=None``).
        """
        self.check_deadline()
        row = self.db.try_lock_resource(row_id, self.holder, self.stack.id, self.traversal_id,
                                        owner=self.owner, cancelled_ok=self.reverting,
                                        start=start, event=self.runtime.engine_id)
        if row is None:
            row = run_start(self._wait_for_lock(row_id), start, self._start_write)
        self.mark_held(row.id, row.engine_id == self.holder)
        return row

    def _start_write(self, row, values):
        return self.write(row, event=self.runtime.engine_id, **values)

    def write_free(self, snapshot, start, keep_lock=False):
        """:meth:`lock` in the statement of the ``start`` writes, when
        ``snapshot`` (read when the flow was built) is still the row as it
        is: one statement (:meth:`Database.write_free_resource`). The writes
        end by releasing the lock, or with ``keep_lock`` leave it held.
        Returns the row as written, or None when that does not apply (then
        :meth:`lock` it)."""
        self.check_deadline()
        row = self.db.write_free_resource(
            snapshot, self.holder, self.stack.id, self.traversal_id, owner=self.owner,
            cancelled_ok=self.reverting, start=start, event=self.runtime.engine_id,
            keep_lock=keep_lock)
        if row is not None and keep_lock:
            self.mark_held(row.id, True)
        return row

    def _wait_for_lock(self, row_id):
        # Taken, superseded or cancelled: find out which, the slow way.
        delay = 0.02
        while True:
            self.check_owner()
            try:
                row = self.db.lock_resource(row_id, self.holder, may_steal=self.may_steal)
            except exceptions.ResourceLocked:
                # Typically a superseded traversal's action still in flight;
                # it keeps its result and releases the lock when done.
                if self.runtime.lock_wait(self.wait_event(), delay):
                    self.check_owner()
                delay = min(delay * 2, 0.5)
            else:
                self.mark_held(row.id, True)
                return row

    @contextlib.contextmanager
    def waiting(self):
        """While a task only waits (for signals): its worker and its job
        slot serve others, as while it waits for a child stack."""
        slots = self.runtime.slots
        with (slots.waiting(self.traversal_id) if slots is not None
              else contextlib.nullcontext()), workers.waiting():
            yield

    # -- acting -------------------------------------------------------------

    def plugin(self, row, properties):
        data = (row.attr_data or {}).get("data") or {}
        context = base.ActionContext(
            stack_id=row.stack_id,
            stack_name=self.stack.name,
            resource_id=row.id,
            resource_name=row.name,
            type_name=row.type,
            traversal_id=self.traversal_id,
            create_key=(row.attr_data or {}).get(CREATE_KEY) or create_key(
                row.id, row.traversal_id or self.traversal_id),
            store=self.runtime.store,
            physical_id=row.physical_id,
            data=dict(data),
            stop_event=self.wait_event(),
            still_owner=self.check_owner,
            children=ChildStacks(self),
            holder=self.holder,
            request_context=tenancy.restore(self.stack.request_context, current=False),
            software_configs=SoftwareConfigStore(self.db),
            project_id=self.stack.project_id,
        )
        context.signals = SignalBox(self.db, self.runtime.events, row.stack_id, row,
                                    stop_event=context.stop_event,
                                    still_owner=self.check_owner, waiting=self.waiting)
        plugin = self.runtime.registry.get(row.type)(row.name, properties, context)
        # A delete runs without a definition: the row's data says if adopted.
        definition = self.definition
        adopts = definition.external_id(row.name) if definition is not None else None
        return external.adopted(plugin, adopts)

    def in_database_only(self, row):
        """Do the actions of ``row``'s type change nothing outside this
        database (:attr:`Resource.side_effects`)?

        Such an action runs inside its lock's transaction, which also
        records its start and its end: a crash before the commit leaves
        nothing behind, so the start need not be durable first.
        """
        # Asked when the flow is built (nestedflow.flows.tasks.waves) and
        # again by the resource's task: the answer holds for the traversal
        # (its types, hooks and checks do not change while it runs).
        key = (row.name, row.type)
        found = self._database_only.get(key)
        if found is None:
            found = self._database_only[key] = self._decide_database_only(row)
        return found

    def _decide_database_only(self, row):
        try:
            plugin_cls = self.runtime.registry.get(row.type)
        except exceptions.NestedflowError:
            return False  # an unknown type fails where failures are recorded
        # Checks may take long and touch the network, a hook waits for a
        # signal: never inside the lock.
        return not plugin_cls.side_effects and not (
            self.definition is not None and self.checks.guards(row.name, plugin_cls)) and (
            not hooks.has_hooks(self, row.name))

    def set_state(self, row, action, status, reason="", release=False, **values):
        return self.write(row, event=self.runtime.engine_id, release=release, action=action,
                          status=status, status_reason=reason, **values)

    def write(self, row, release=False, **values):
        """Compare-and-swap write of a row this task locked."""
        row = self.db.update_resource(row, self.holder, release=release, **values)
        if release:
            self.mark_held(row.id, False)
        return row

    def release(self, row):
        return self.write(row, release=True)

    def set_stack_state(self, action, status, reason, **values):
        self.db.set_stack_state(self.stack.id, self.traversal_id, action, status, reason,
                                owner=self.owner, **values)
