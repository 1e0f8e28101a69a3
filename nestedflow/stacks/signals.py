"""What a resource plugin may know of signals (``ActionContext.signals``).

A signal (``Engine.signal_resource``) is kept in the database by the
process that received it, which then announces it over oslo.messaging
(:meth:`nestedflow.messaging.events.StackEvents.signalled`). An action
waiting for signals -- a wait condition for its handle's, a hook for its
clearing -- blocks on that announcement, not on a database poll loop; the
database is read when it is woken, and after the events' safety interval
in case an announcement was lost.
"""

import contextlib
import time

from nestedflow import exceptions
from nestedflow.messaging.events import signal_key

#: Longest a wait sleeps between reads when announcements cannot cross
#: processes (``fake://``: a signal received by another process's embedded
#: engine is not announced here).
IN_PROCESS_POLL = 2.0


class SignalBox:
    """The signals of one resource and its stack, for its plugin."""

    def __init__(self, db, events, stack_id, row, stop_event=None, still_owner=None,
                 waiting=None, key=None):
        self._db = db
        self._events = events
        self.stack_id = stack_id
        self._row = row
        self._stop_event = stop_event
        self._still_owner = still_owner or (lambda: None)
        #: Context manager giving the action's worker and job slot up while it waits.
        self._waiting = waiting
        #: The key of the signal being handled (``handle_signal``): the same
        #: signal delivered twice has the same key.
        self.key = key
        #: Resizes a scaling group (nestedflow.engine.scaling), where a
        #: signal is being handled; None in an action.
        self.scaler = None

    def _current(self, resource_name):
        for row in self._db.list_resources(self.stack_id):
            if row.name == resource_name:
                return row
        return None

    def received(self, resource_name=None):
        """Details of the signals kept for the resource (this one by default),
        oldest first; none for a resource that does not exist (any more)."""
        row = self._row if resource_name is None else self._current(resource_name)
        return [] if row is None else [details for _, details in
                                       self._db.list_signals(row.id)]

    def keep(self, details, key=None, replace=False):
        """Keep a signal to this resource (``key``, by default the signal's
        own, makes it once); with ``replace`` a signal of the same key
        overwrites it. True if kept."""
        key = key or self.key
        if self._db.add_signal(self._row, key, details):
            return True
        if replace:
            self._db.replace_signal(self._row.id, key, details)
            return True
        return False

    def forget(self, resource_name=None):
        """Drop the signals kept for the resource (this one by default)."""
        row = self._row if resource_name is None else self._current(resource_name)
        if row is not None:
            self._db.delete_signals(row.id)

    def resource(self, reference):
        """(name, type) of the resource of this stack that ``get_resource``
        gives ``reference`` for (its name, also accepted), or None."""
        for row in self._db.list_resources(self.stack_id):
            ref = (row.attr_data or {}).get("ref")
            if reference in (ref, row.physical_id, row.name) and reference is not None:
                return row.name, row.type
        return None

    def wait(self, resource_name, is_done, timeout=None):
        """Block until ``is_done()`` (read again on every signal to
        ``resource_name``); False when ``timeout`` seconds passed first.
        Raises (OwnershipLost, Cancelled...) once the action is no longer
        ours: a change of the stack (superseded, cancelled) wakes it too."""
        deadline = None if timeout is None else time.monotonic() + timeout
        keys = (signal_key(self.stack_id, resource_name), self.stack_id)
        in_process = getattr(self._events, "_in_process", False)

        def settled():
            return is_done() or self._stopped()

        waiting = self._waiting() if self._waiting is not None else contextlib.nullcontext()
        with waiting:
            while True:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return is_done()
                slice_ = IN_PROCESS_POLL if in_process else None
                if remaining is not None:
                    slice_ = remaining if slice_ is None else min(slice_, remaining)
                woken = self._events.wait(keys, settled, timeout=slice_,
                                          stop_event=self._stop_event)
                if self._stopped():
                    self._still_owner()
                    raise exceptions.OwnershipLost(
                        f"{self._row.name}: stopped while waiting for signals")
                if woken:
                    return True

    def _stopped(self):
        if self._stop_event is not None and self._stop_event.is_set():
            return True
        try:
            self._still_owner()
        except Exception:
            return True
        return False
