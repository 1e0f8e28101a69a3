"""What a flow factory needs from the process running it.

Job arguments must be JSON and must not carry secrets such as the database
URL, so a factory gets the process's database, plugin registry and identity
from the :class:`Runtime` that the runner (embedded engine or conductor)
installs around loading the flow.
"""

import contextlib
import contextvars
import dataclasses
import threading
import typing

from nestedflow.db import models
from nestedflow.flows import workers

_CURRENT = contextvars.ContextVar("nestedflow_runtime")
_OWNER = contextvars.ContextVar("nestedflow_owner", default=None)


@dataclasses.dataclass
class Runtime:
    db: typing.Any
    store: typing.Any
    registry: typing.Any
    #: Who runs the work: recorded in events and used as the lock holder prefix.
    engine_id: str
    max_workers: int
    #: Threads beyond ``max_workers`` for actions waiting on nested stacks.
    max_nested_waits: int = 0
    #: A resource lock untouched this long by a run that is not ours is stale.
    lock_timeout: float = 300.0
    #: Starts child stacks' traversals (nestedflow.stacks.lifecycle.StackLifecycle).
    stacks: typing.Any = None
    #: Stack completion notifications (nestedflow.messaging.events.StackEvents).
    events: typing.Any = None
    #: Job slots of this process; a job waiting only on children gives its slot up.
    slots: typing.Any = None
    #: ``owner_alive(owner)`` -> True/False when the process knows whether the
    #: run ``owner`` of another process is alive (conductors ask ZooKeeper),
    #: None when it cannot tell; then only the lock's age decides.
    owner_alive: typing.Any = None
    #: Worker pools kept across runs (:class:`workers.PoolCache`).
    pools: workers.PoolCache = dataclasses.field(default_factory=workers.PoolCache)
    _stops: dict = dataclasses.field(default_factory=dict)
    _stops_lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    _owners: set = dataclasses.field(default_factory=set)
    _timers: dict = dataclasses.field(default_factory=dict)

    def holder_alive(self, row):
        """Whether the run holding ``row``'s lock may still be acting on it."""
        _, _, owner = (row.engine_id or "").partition("/")
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
