"""Notifications in Heat's format, for the host's consumers.

Stack notifications follow ``heat.engine.notification.stack.send`` and
``heat.engine.api.format_notification_body``: event type
``orchestration.stack.<action>.start|end|error`` (IN_PROGRESS, COMPLETE,
FAILED), level INFO (ERROR for ``error``), publisher ``orchestration.<host>``,
payload ``tenant_id user_id user_identity username stack_identity
stack_name state state_reason create_at description updated_at tags``.
Resource notifications (``orchestration.resource.<action>.start|end|error``)
carry that payload's tenancy and stack fields plus Heat's event fields
(``heat.engine.api.format_event``): ``resource_name physical_resource_id
resource_action resource_status resource_status_reason resource_type
event_time``. Neither carries parameters or properties, so hidden
parameters never leave the engine. The message context is the stored
request context (its request id; never its token).

They go out through oslo.messaging's Notifier as configured by the standard
``[oslo_messaging_notifications]`` section (``driver``, ``topics``,
``transport_url``), and to in-process subscribers (:meth:`subscribe`): a
host embedding nestedflow without a broker. With neither, nothing is read
or built.
"""

import collections
import logging
import threading

import oslo_messaging as messaging

from nestedflow import states, tenancy
from nestedflow.messaging import transport
from nestedflow.messaging.serializer import ContextSerializer

LOG = logging.getLogger(__name__)

SERVICE = "orchestration"
_SUFFIX = {states.IN_PROGRESS: "start", states.COMPLETE: "end", states.FAILED: "error"}
#: Stacks whose name and owner resource notifications look up, most recent.
_STACK_CACHE = 256


def _isotime(value):
    # heat.common.timeutils.isotime: second precision, UTC "Z".
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


class Notifications:
    """Builds and sends an engine's notifications (see the module docstring)."""

    def __init__(self, conf, db, transport_url, host):
        self._db = db
        self._subscribers = []
        self._lock = threading.Lock()
        self._stacks = collections.OrderedDict()
        #: (stack id, traversal id) of rollbacks whose start was notified.
        self._rollbacks = collections.OrderedDict()
        self._notifier = None
        self._transport = None
        transport.register_opts(conf)
        section = conf[transport.NOTIFICATIONS]
        if [d for d in section.driver if d != "noop"]:
            self._transport = messaging.get_notification_transport(
                conf, url=transport.notification_url(conf, transport_url))
            self._notifier = messaging.Notifier(
                self._transport, publisher_id=f"{SERVICE}.{host}",
                serializer=ContextSerializer())

    @property
    def active(self):
        return self._notifier is not None or bool(self._subscribers)

    def subscribe(self, callback):
        """Call ``callback(event_type, payload, context)`` for every
        notification this process sends (``context``: the request context
        dict, or None); returns a function that unsubscribes it."""
        with self._lock:
            self._subscribers = [*self._subscribers, callback]

        def unsubscribe():
            with self._lock:
                self._subscribers = [s for s in self._subscribers if s is not callback]

        return unsubscribe

    # -- stacks -------------------------------------------------------------

    def stack_changed(self, stack_id, action, status, stack=None):
        """A Database.on_stack_change listener: a traversal started or settled."""
        if not self.active or status not in _SUFFIX:
            return  # a cancel request is not a state
        try:
            row = stack if stack is not None else self._db.get_stack(stack_id)
            self._remember(row)
            payload = self._stack_payload(row)
            if action == states.ROLLBACK:
                self._rollback_start(row, status, payload)
            payload["state"] = f"{action}_{status}"
            self._send(row.request_context, f"stack.{action.lower()}.{_SUFFIX[status]}",
                       status, payload)
        except Exception:  # a notification must never fail the stack
            LOG.exception("could not notify the %s_%s of stack %s", action, status, stack_id)

    def _rollback_start(self, row, status, payload):
        """Heat notifies a rollback's start (``update_task(action=ROLLBACK)``
        sets ROLLBACK_IN_PROGRESS); an update here rolls back inside its
        traversal and settles ROLLBACK_COMPLETE directly, so its start is
        notified with its end."""
        key = (row.id, row.current_traversal)
        with self._lock:
            started = key in self._rollbacks
            if status == states.IN_PROGRESS:
                self._rollbacks[key] = True
                while len(self._rollbacks) > _STACK_CACHE:
                    self._rollbacks.popitem(last=False)
            else:
                self._rollbacks.pop(key, None)
        if status != states.IN_PROGRESS and not started:
            self._send(row.request_context, "stack.rollback.start", states.IN_PROGRESS,
                       {**payload, "state": "ROLLBACK_IN_PROGRESS"})

    def _stack_payload(self, row):
        context = row.request_context or {}
        description = None
        try:
            description = (self._db.get_template(row.raw_template_id).template or {}).get(
                "description")
        except Exception:
            LOG.debug("no template for stack %s", row.id, exc_info=True)
        return {
            "tenant_id": row.project_id,
            # Heat: user_id is the user *name* (deprecated), user_identity the id.
            "user_id": context.get("user_name"),
            "user_identity": row.user_id,
            "username": context.get("user_name"),
            "stack_identity": row.id,
            "stack_name": row.name,
            "state": f"{row.action}_{row.status}",
            "state_reason": row.status_reason,
            "create_at": _isotime(row.created_at),
            "description": description,
            "updated_at": _isotime(row.updated_at),
            "tags": getattr(row, "tags", None),
        }

    # -- resources ----------------------------------------------------------

    def resource_events(self, resource, events):
        """A Database.on_resource_events listener: ``events`` (event column
        dicts) were written for the resource row ``resource``."""
        if not self.active:
            return
        try:
            stack = self._stack(resource.stack_id)
            for event in events:
                status = event["status"]
                if status not in _SUFFIX:
                    continue
                payload = {
                    "tenant_id": stack.project_id,
                    "user_identity": stack.user_id,
                    "stack_identity": stack.id,
                    "stack_name": stack.name,
                    "resource_name": event["resource_name"],
                    "physical_resource_id": event["physical_id"],
                    "resource_action": event["action"],
                    "resource_status": status,
                    "resource_status_reason": event["status_reason"],
                    "resource_type": resource.type,
                    "event_time": _isotime(event["timestamp"]),
                }
                self._send(stack.request_context,
                           f"resource.{event['action'].lower()}.{_SUFFIX[status]}",
                           status, payload)
        except Exception:
            LOG.exception("could not notify the events of resource %s", resource.name)

    def _stack(self, stack_id):
        with self._lock:
            row = self._stacks.get(stack_id)
            if row is not None:
                self._stacks.move_to_end(stack_id)
                return row
        # find_stack reads without beginning a transaction: this runs inside
        # the resource write's, which on SQLite holds the process's write
        # turn -- get_stack would wait the whole busy timeout for it.
        row = self._db.find_stack(stack_id)
        self._remember(row)
        return row

    def _remember(self, row):
        # The latest row of each stack: its request context is the latest action's.
        with self._lock:
            self._stacks[row.id] = row
            self._stacks.move_to_end(row.id)
            while len(self._stacks) > _STACK_CACHE:
                self._stacks.popitem(last=False)

    # -- sending ------------------------------------------------------------

    def _send(self, context, event_type, status, payload):
        event_type = f"{SERVICE}.{event_type}"
        for callback in self._subscribers:
            try:
                callback(event_type, dict(payload), context)
            except Exception:
                LOG.exception("notification subscriber %r failed", callback)
        if self._notifier is not None:
            send = self._notifier.error if status == states.FAILED else self._notifier.info
            send(tenancy.restore(context, current=False), event_type, payload)

    def close(self):
        if self._transport is not None:
            self._transport.cleanup()
