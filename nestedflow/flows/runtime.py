"""What a flow factory needs from the process running it.

Job arguments must be JSON and must not carry secrets such as the database
URL, so a factory gets the process's database, plugin registry and identity
from the :class:`Runtime` that the runner (embedded engine or conductor)
installs around loading the flow.

A runtime is built once, whole, by the engine (and derived once by a
conductor or a dispatcher that brings its own job slots: :meth:`Runtime.
with_parts`), then never changed: what each part must offer is one of the
small protocols below.
"""

import contextlib
import contextvars
import dataclasses
import threading
import typing

from nestedflow.db import models
from nestedflow.db.owners import OwnerToken
from nestedflow.pools import workers

_CURRENT = contextvars.ContextVar("nestedflow_runtime")
_OWNER = contextvars.ContextVar("nestedflow_owner", default=None)


class StateDatabase(typing.Protocol):
    """The state database (:class:`nestedflow.db.api.Database`); the few
    methods every traversal uses are listed, tasks use more."""

    def get_stack(self, stack_id): ...

    def ownership(self, stack_id): ...

    def list_all_resources(self, stack_id): ...

    def get_template(self, template_id): ...


class TraversalStarter(typing.Protocol):
    """Starts traversals of stacks (:class:`nestedflow.stacks.lifecycle.
    StackLifecycle`): a rollback's convergence pass, nested stacks."""

    def start_traversal(self, stack_id, expected_traversal, action, **values): ...

    def create(self, name, template, parameters=None, files=None, environment=None,
               **kwargs): ...

    def update(self, stack_id, template, parameters=None, files=None, environment=None,
               **kwargs): ...

    def delete(self, stack_id, context=None): ...

    def action(self, stack_id, action, context=None): ...

    def cancel(self, stack_id, rollback=True): ...


class SlotGate(typing.Protocol):
    """The process's job slots (:class:`nestedflow.dispatch.slots.SlotGate`)."""

    def job(self, key) -> typing.ContextManager: ...

    def waiting(self, key) -> typing.ContextManager: ...


class OwnerProbe(typing.Protocol):
    """Is run ``owner`` of another process alive? True or False when the
    process knows (conductors ask ZooKeeper), None when it cannot tell."""

    def __call__(self, owner) -> bool | None: ...


@dataclasses.dataclass(frozen=True)
class Runtime:
    db: StateDatabase
    #: The physical objects of the built-in types (db.physical.PhysicalStore).
    store: typing.Any
    #: Resource types by name (resources.registry.ResourceRegistry).
    registry: typing.Any
    #: Who runs the work: recorded in events and used as the lock holder prefix.
    engine_id: str
    max_workers: int
    #: Threads beyond ``max_workers`` for actions waiting on nested stacks.
    max_nested_waits: int = 0
    #: A resource lock untouched this long by a run that is not ours is stale.
    lock_timeout: float = 300.0
    #: Starts traversals: a rollback's convergence pass, child stacks.
    stacks: TraversalStarter | None = None
    #: Stack completion notifications (nestedflow.messaging.events.StackEvents).
    events: typing.Any = None
    #: Job slots of this process; a job waiting only on children gives its slot up.
    slots: SlotGate | None = None
    #: Whether the run holding a lock is alive, where the process can tell;
    #: else (None) only the lock's age decides.
    owner_alive: OwnerProbe | None = None
    #: Act on database-only resources a dependency wave at a time
    #: (:mod:`nestedflow.flows.tasks.waves`; ``[engine] database_only_waves``).
    database_only_waves: bool = True
    #: Worker pools kept across runs (:class:`workers.PoolCache`).
    pools: workers.PoolCache = dataclasses.field(default_factory=workers.PoolCache)
    _stops: dict = dataclasses.field(default_factory=dict)
    _stops_lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    _owners: set = dataclasses.field(default_factory=set)
    _timers: dict = dataclasses.field(default_factory=dict)

    def with_parts(self, **parts):
        """This runtime with other ``slots`` or ``owner_alive`` (a conductor's,
        a dispatcher's own slots), sharing its stop events and worker pools."""
        return dataclasses.replace(self, **parts)

    def holder_alive(self, row):
        """Whether the run holding ``row``'s lock may still be acting on it."""
        _, owner = OwnerToken(row.engine_id or "").holder_parts
        with self._stops_lock:
            if owner in self._owners:
                return True
        if owner and self.owner_alive is not None:
            alive = self.owner_alive(owner)
            if alive is not None:
                return alive
        if row.updated_at is None:
            return False
        age = (models.utcnow() - row.updated_at).total_seconds()
        return age < self.lock_timeout

    def started(self, owner):
        with self._stops_lock:
            self._owners.add(owner)

    def finished(self, owner):
        with self._stops_lock:
            self._owners.discard(owner)

    def lock_wait(self, event, timeout):
        """Wait up to ``timeout`` seconds, or until ``event`` is set, for a
        resource lock another run holds; True if ``event`` was set. (The
        simulator, :mod:`nestedflow.testing.stepped`, pauses here.)"""
        return event.wait(timeout)

    def stop_event(self, traversal_id):
        """Set to make in-flight waits of ``traversal_id`` stop early."""
        with self._stops_lock:
            return self._stops.setdefault(traversal_id, threading.Event())

    def stop_at(self, traversal_id, deadline):
        """Set the traversal's stop event at ``deadline`` (UTC, naive): its
        waits end then, and its tasks find the deadline passed."""
        event = self.stop_event(traversal_id)
        delay = max(0.0, (deadline - models.utcnow()).total_seconds())
        timer = threading.Timer(delay, event.set)
        timer.daemon = True
        with self._stops_lock:
            previous = self._timers.pop(traversal_id, None)
            self._timers[traversal_id] = timer
        if previous is not None:
            previous.cancel()
        timer.start()

    def forget(self, traversal_id):
        with self._stops_lock:
            self._stops.pop(traversal_id, None)
            timer = self._timers.pop(traversal_id, None)
        if timer is not None:
            timer.cancel()

    def stop_all(self):
        with self._stops_lock:
            for event in self._stops.values():
                event.set()


def current_owner():
    """The claim token of the run whose flow is being built."""
    return _OWNER.get()


def current():
    try:
        return _CURRENT.get()
    except LookupError:
        raise RuntimeError("no nestedflow runtime installed for this flow") from None


@contextlib.contextmanager
def installed(runtime, owner=None):
    token = _CURRENT.set(runtime)
    owner_token = _OWNER.set(owner)
    try:
        yield runtime
    finally:
        _OWNER.reset(owner_token)
        _CURRENT.reset(token)
