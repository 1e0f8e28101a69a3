"""Stack state notifications over oslo.messaging.

A parent resource waiting for its nested stack blocks on a notification,
not a database poll loop: every process listens on one topic with its own
listener pool (so each process gets every notification), and wakes the
local waiters of the stack that changed -- a child that settled, or a
parent whose traversal was superseded or cancelled -- or of the resource
that was signalled (a wait condition's handle, a paused hook). A slow database check
remains as a safety net for a lost notification.
"""

import logging
import threading
import time
import uuid

import oslo_messaging as messaging
from oslo_config import cfg

from nestedflow import exceptions
from nestedflow.links import rabbit

LOG = logging.getLogger(__name__)

TOPIC = "nestedflow_stack_events"
EVENT_TYPE = "stack.changed"


class StackEvents:
    """Publishes "stack changed" and lets threads wait for it."""

    def __init__(self, transport_url="fake://", safety_interval=30.0):
        # A private ConfigOpts keeps oslo.messaging's options off the
        # embedding application's global configuration.
        conf = cfg.ConfigOpts()
        # No files: oslo.config would look for /etc/<program name>.conf --
        # the host's (a program named "host" read /etc/host.conf).
        conf([], project="nestedflow", default_config_files=[], default_config_dirs=[])
        self.safety_interval = safety_interval
        self._transport = messaging.get_notification_transport(conf, url=transport_url)
        # fake:// reaches only this object's own listener, which would wake
        # the waiters changed() wakes anyway; and with no listener (an
        # embedded engine that never waits on a nested stack) its driver
        # keeps every message in memory for ever.
        self._in_process = (transport_url or "fake://").startswith("fake:")
        if not self._in_process:
            problem = rabbit.tls_problem(transport_url)
            if problem:
                self._transport.cleanup()
                raise exceptions.LinkSecurityError(problem)
        self._notifier = messaging.Notifier(
            self._transport, driver="messaging", publisher_id="nestedflow", topics=[TOPIC]
        )
        self._listener = None
        self._lock = threading.Lock()
        self._waiters = {}
        #: (stack id, seconds from notification sent to waiter woken) of recent waits.
        self.latencies = []

    def start(self):
        if self._in_process:
            return  # changed() wakes the waiters itself
        with self._lock:
            if self._listener is not None:
                return
            endpoint = _Endpoint(self)
            self._listener = messaging.get_notification_listener(
                self._transport,
                [messaging.Target(topic=TOPIC)],
                [endpoint],
                executor="threading",
                pool=f"nestedflow-{uuid.uuid4().hex}",
            )
            self._listener.start()

    def changed(self, stack_id, action, status, stack=None):
        """Announce a new state of ``stack_id`` (started, cancelled, settled);
        ``stack``, the row as written, is not sent (see Database.on_stack_change)."""
        if not self._in_process:
            payload = {"stack_id": stack_id, "action": action, "status": status,
                       "sent_at": time.time()}
            try:
                self._notifier.info({}, EVENT_TYPE, payload)
            except Exception:  # the database check still finds the result
                LOG.exception("could not publish the state of stack %s", stack_id)
        self._wake(stack_id)

    def signalled(self, stack_id, resource_name):
        """Announce a signal to (or a hook cleared on) a resource: the
        actions waiting for it (:meth:`wait` on :func:`signal_key`) wake,
        in whichever process they run."""
        self.changed(signal_key(stack_id, resource_name), "SIGNAL", "COMPLETE")

    def _wake(self, stack_id, sent_at=None):
        with self._lock:
            events = list(self._waiters.get(stack_id, ()))
        for event in events:
            event.sent_at = sent_at
            event.set()

    def wait(self, stack_ids, is_done, timeout=None, stop_event=None):
        """Block until ``is_done()`` is true; woken by notifications.

        ``stack_ids`` (one id or several) are the stacks whose changes may
        make ``is_done`` true. ``is_done`` reads the database: it is checked
        once before waiting, on every notification, and every
        ``safety_interval`` seconds in case a notification was lost.
        Returns False on timeout or when ``stop_event`` is set.
        """
        self.start()
        if isinstance(stack_ids, str):
            stack_ids = (stack_ids,)
        event = threading.Event()
        event.sent_at = None
        with self._lock:
            for stack_id in stack_ids:
                self._waiters.setdefault(stack_id, set()).add(event)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                if is_done():
                    if event.sent_at is not None:
                        self.latencies.append((stack_ids[0], time.time() - event.sent_at))
                    return True
                if stop_event is not None and stop_event.is_set():
                    return False
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                wait_for = self.safety_interval if remaining is None else min(
                    self.safety_interval, remaining)
                if stop_event is not None:
                    wait_for = min(wait_for, 0.5)
                event.wait(wait_for)
                event.clear()
        finally:
            with self._lock:
                for stack_id in stack_ids:
                    waiters = self._waiters.get(stack_id)
                    if waiters is not None:
                        waiters.discard(event)
                        if not waiters:
                            del self._waiters[stack_id]

    def close(self):
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
            listener.wait()
        self._transport.cleanup()


def signal_key(stack_id, resource_name):
    """What waiters for signals to one resource wait on (a stack id's place)."""
    return f"{stack_id}/signal/{resource_name}"


class _Endpoint:
    filter_rule = messaging.NotificationFilter(event_type=EVENT_TYPE)

    def __init__(self, events):
        self._events = events

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._events._wake(payload.get("stack_id"), payload.get("sent_at"))
        return messaging.NotificationResult.HANDLED
