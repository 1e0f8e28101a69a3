"""The public Engine: validate, store, then dispatch each traversal."""

import functools
import os
import socket
import threading
import time

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.db.api import Database
from nestedflow.dispatch.local import LocalDispatcher
from nestedflow.engine import views
from nestedflow.flows.runtime import Runtime
from nestedflow.messaging.events import StackEvents
from nestedflow.plugins.loader import ResourceRegistry
from nestedflow.resources.physical import PhysicalStore
from nestedflow.stacks.lifecycle import StackLifecycle


class Engine:
    """Deploys stacks; see DESIGN.md section 3 for the contract.

    With no ``jobboard_url`` every traversal runs in this process, in the
    same flows and tasks a conductor would run.
    """

    def __init__(self, db_url=None, jobboard_url=None, transport_url=None, *,
                 max_workers=None, registry=None, engine_id=None):
        self.jobboard_url = jobboard_url or CONF.engine.jobboard_url
        self.transport_url = transport_url or CONF.engine.transport_url
        self.db = Database(db_url or CONF.database.connection)
        self.db.sync()
        self.registry = registry or ResourceRegistry()
        self.store = PhysicalStore(self.db)
        self.runtime = Runtime(
            db=self.db,
            store=self.store,
            registry=self.registry,
            engine_id=engine_id or f"engine-{socket.gethostname()}-{os.getpid()}",
            max_workers=max_workers or CONF.engine.max_workers,
            max_nested_waits=CONF.engine.max_nested_waits,
        )
        self._backend = self.db.taskflow_backend()
        self.stacks = StackLifecycle(self.db, self.registry, self._dispatch)
        self.runtime.stacks = self.stacks
        self.events = StackEvents(self.transport_url)
        self.runtime.events = self.events
        self.db.on_stack_change(self.events.changed)
        self._dispatcher = self._make_dispatcher()
        self._settled = threading.Condition()
        #: Bumped on every wake-up, so a waiter that read the stack before a
        #: settle it was not yet waiting for does not sleep through it.
        self._settle_count = 0
        #: Stack id -> a _WaitSlot per wait() on it, given the row each
        #: in-process write of the stack's state returned.
        self._waiting = {}
        # A stack settles when its state is written, before its traversal's
        # thread has flushed the journal and returned: waiters wake at once.
        self.db.on_stack_change(self._notify_if_settled)
        self._dispatcher.add_done_callback(self._notify_settled)
        self._closed = False

    def _make_dispatcher(self):
        if self.jobboard_url:
            # Imported here: kazoo is only needed by distributed deployments.
            try:
                from nestedflow.dispatch.jobboard import JobboardDispatcher
            except ImportError as error:
                raise exceptions.NestedflowError(
                    f"jobboard_url needs the ZooKeeper client ({error}): "
                    "pip install 'nestedflow[zookeeper]'") from error

            return JobboardDispatcher(self.jobboard_url, self.db, self._backend,
                                      poster=self.runtime.engine_id)
        return LocalDispatcher(self.runtime, self._backend)

    def _notify_settled(self):
        with self._settled:
            self._settle_count += 1
            self._settled.notify_all()

    def _notify_if_settled(self, stack_id, action, status, stack=None):
        with self._settled:
            for slot in self._waiting.get(stack_id, ()):
                slot.row = stack
            if status != "IN_PROGRESS":
                self._settle_count += 1
                self._settled.notify_all()

    @property
    def runs_in_process(self):
        return self._dispatcher.runs_in_process

    # -- lifecycle ----------------------------------------------------------

    def create_stack(self, name, template, parameters=None, files=None, environment=None,
                     disable_rollback=False, timeout=None):
        # The row as stored: reading it back would cost a round trip.
        return views.Stack.from_row(self.stacks.create(name, template, parameters, files,
                                                       environment, disable_rollback,
                                                       timeout))

    def update_stack(self, stack_id, template, parameters=None, files=None, environment=None,
                     existing=False, disable_rollback=None):
        """Converge the stack to a new template; supersedes a traversal in progress.

        ``existing=True`` is Heat's PATCH: the stored template, parameters,
        files and environment are kept where not given.
        """
        return self.get_stack(self.stacks.update(stack_id, template, parameters, files,
                                                 environment, existing, disable_rollback))

    def delete_stack(self, stack_id):
        return self.get_stack(self.stacks.delete(stack_id))

    def suspend_stack(self, stack_id):
        return self.get_stack(self.stacks.action(stack_id, "SUSPEND"))

    def resume_stack(self, stack_id):
        return self.get_stack(self.stacks.action(stack_id, "RESUME"))

    def check_stack(self, stack_id):
        return self.get_stack(self.stacks.action(stack_id, "CHECK"))

    def cancel_update(self, stack_id, rollback=True):
        """Cancel a create or update in progress.

        With ``rollback`` the traversal reverts (waits in flight are cut
        short); without, no new action starts and the stack ends FAILED once
        the actions in flight finish.
        """
        traversal_id = self.stacks.cancel(stack_id, rollback)
        if rollback:
            self.runtime.stop_event(traversal_id).set()
        return self.get_stack(stack_id)

    def _dispatch(self, stack_id, traversal_id, action):
        if self._closed:
            raise exceptions.NestedflowError("engine is closed")
        self._dispatcher.dispatch(stack_id, traversal_id, action)

    # -- reading ------------------------------------------------------------

    def get_stack(self, stack_id):
        return views.Stack.from_row(self.db.find_stack(stack_id))

    def list_stacks(self, show_nested=False):
        return [views.Stack.from_row(row) for row in self.db.list_stacks(show_nested)]

    def list_resources(self, stack_id, nested_depth=0):
        """The stack's current resources; ``nested_depth`` levels of nested
        stacks' resources follow the resource that owns each of them."""
        result = []
        for stack in self._tree(stack_id, nested_depth):
            rows = self.db.list_resources(stack.id)
            result.extend(views.Resource.from_row(row, stack.name) for row in rows)
        return result

    def list_events(self, stack_id, nested_depth=0):
        """The stack's events (oldest first), with ``nested_depth`` levels of
        nested stacks' events merged in time order."""
        events = []
        for stack in self._tree(stack_id, nested_depth):
            events.extend(views.Event.from_row(row, stack.name)
                          for row in self.db.list_events(stack.id))
        events.sort(key=lambda e: (e.timestamp, e.id))
        return events

    def _tree(self, stack_id, nested_depth):
        """The stack and its nested stacks down to ``nested_depth``, breadth first."""
        pending = [(self.db.find_stack(stack_id), 0)]
        while pending:
            stack, depth = pending.pop(0)
            yield stack
            if depth < nested_depth:
                pending.extend((child, depth + 1) for child in self.db.list_children(stack.id)
                               if child.deleted_at is None or stack.deleted_at is not None)

    def wait(self, stack_id, timeout=None):
        """Block until the stack is no longer IN_PROGRESS; returns it."""
        slot = _WaitSlot()
        with self._settled:
            self._waiting.setdefault(stack_id, []).append(slot)
        try:
            return self._wait(stack_id, timeout, slot)
        finally:
            with self._settled:
                slots = self._waiting[stack_id]
                slots.remove(slot)
                if not slots:
                    del self._waiting[stack_id]

    def _wait(self, stack_id, timeout, slot):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._settled:
                seen = self._settle_count
                written, slot.row = slot.row, None
            # The stack as this process's last write of its state returned
            # it, if any since the last look: a settled stack's waiter
            # wakes without reading it back.
            stack = (views.Stack.from_row(written) if written is not None
                     else self.get_stack(stack_id))
            if stack.status != "IN_PROGRESS":
                return stack
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise exceptions.WaitTimeout(
                    f"stack {stack.name} still {stack.action}_IN_PROGRESS after {timeout}s"
                )
            pause = 0.5 if remaining is None else min(0.5, remaining)
            if not self.runs_in_process:
                # Conductors announce settled stacks over oslo.messaging; the
                # short timeout covers a lost notification and fake://.
                self.events.wait(stack.id, functools.partial(self._settled_in_db, stack.id),
                                 timeout=pause)
                continue
            with self._settled:
                # Woken when an in-process traversal settles or ends; the
                # timeout also covers traversals finished by other processes.
                if self._settle_count == seen:
                    self._settled.wait(pause)

    def _settled_in_db(self, stack_id):
        return self.db.get_stack(stack_id).status != "IN_PROGRESS"

    def close(self):
        """Let in-process traversals finish, then release connections."""
        if self._closed:
            return
        self._closed = True
        self._dispatcher.close()
        self.runtime.pools.close()
        self.events.close()
        self._backend.close()
        self.db.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _WaitSlot:
    """Where one wait() finds the stack as its last in-process write left it
    (None: not written since, or by a write that did not return it)."""

    __slots__ = ("row",)

    def __init__(self):
        self.row = None
