"""Wait conditions: ``OS::Heat::WaitConditionHandle``,
``OS::Heat::UpdateWaitConditionHandle`` and ``OS::Heat::WaitCondition``.

As Heat's (heat/engine/resources/openstack/heat/wait_condition_handle.py,
wait_condition.py, heat/engine/resources/wait_condition.py): a handle
takes signals (``Engine.signal_resource``, or heat-api's resource signal
forwarded to this engine) and keeps them by their ``id``; a wait condition
on it completes once ``count`` SUCCESS signals arrived, fails on any
FAILURE signal (its reasons joined by ``;``) and fails when ``timeout``
seconds pass first (``"1 of 2 received - <reasons>"``). Its ``data``
attribute is the JSON map of signal id to data.

The wait blocks on the signals' announcements
(:class:`nestedflow.stacks.signals.SignalBox`), giving its worker and job
slot up meanwhile, whichever conductor runs it; a signal is kept in the
database first, so a wait condition resumed elsewhere after a crash sees
every signal already sent.
"""

import json
import secrets
import time

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base

STATUSES = (FAILURE, SUCCESS) = ("FAILURE", "SUCCESS")
SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                     "ZAQAR_SIGNAL", "TOKEN_SIGNAL")


def signal_url(context):
    """Where the resource is signalled from outside (see ``[engine] signal_url_base``)."""
    base_url = (CONF.engine.signal_url_base or "nestedflow:").rstrip("/")
    path = (f"stacks/{context.stack_name}/{context.stack_id}/resources/"
            f"{context.resource_name}/signal")
    return f"{base_url}/{path}" if base_url != "nestedflow:" else f"nestedflow:{path}"


def curl_cli(context, token):
    """A command prefix that signals the resource; ``--data-binary '<json>'``
    completes it (both curl and ``nestedflow stack resource signal`` take it)."""
    url = signal_url(context)
    if not url.startswith("http"):
        return f"nestedflow stack resource signal {context.stack_id} {context.resource_name}"
    return (f"curl -i -X POST -H 'X-Auth-Token: {token}' "
            "-H 'Content-Type: application/json' -H 'Accept: application/json' "
            f"{url}")


class _Handle(base.DatabaseOnlyResource):
    """A wait condition handle: no physical object beyond its signals."""

    #: Its delete drops its signals in a transaction of its own: never
    #: inside the resource lock's (Resource.side_effects).
    side_effects = True
    id_prefix = "handle:"
    #: The keys of one signal's metadata (Heat's METADATA_KEYS).
    KEYS = (DATA, REASON, STATUS, UNIQUE_ID) = ("data", "reason", "status", "id")

    def create(self):
        self.context.data = {"token": secrets.token_hex(16)}
        return super().create()

    def delete(self):
        if self.context.signals is not None:
            self.context.signals.forget()

    def normalise(self, details, received):
        return dict(details) if isinstance(details, dict) else details

    def handle_signal(self, details=None):
        """BaseWaitConditionHandle.handle_signal: validate, keep by id."""
        received = self.metadata()
        metadata = self.normalise(details, received)
        if not isinstance(metadata, dict) or set(metadata) != set(self.KEYS) or (
                metadata[self.STATUS] not in STATUSES):
            raise ValueError("Metadata format invalid")
        unique_id = str(metadata[self.UNIQUE_ID])
        entry = {k: v for k, v in metadata.items() if k != self.UNIQUE_ID}
        explicit = isinstance(details, dict) and self.UNIQUE_ID in details
        # An explicit id overwrites (Heat: "Overwriting Metadata item"); one
        # numbered here is kept once per signal, so a retried call is not
        # counted twice.
        self.context.signals.keep({"id": unique_id, **entry},
                                  key=f"id:{unique_id}" if explicit else None,
                                  replace=explicit)
        return f"status:{entry[self.STATUS]} reason:{entry[self.REASON]}"

    def metadata(self, signals=None):
        """Heat's handle metadata: signal id -> {data, reason, status}."""
        signals = self.context.signals.received() if signals is None else signals
        metadata = {}
        for signal in signals:
            signal = dict(signal)
            metadata[str(signal.pop("id"))] = signal
        return metadata


class WaitConditionHandle(_Handle):
    """The handle a wait condition waits on: signals sent to it (``curl_cli``,
    ``endpoint`` with ``token``) carry ``status``, ``reason``, ``data`` and ``id``."""

    properties_schema = {
        "signal_transport": Property(
            Types.STRING, "How the client signals the wait condition (nestedflow takes "
            "every transport's signals through its own and heat-api's signal path).",
            default="TOKEN_SIGNAL",
            constraints=[constraints.AllowedValues(list(SIGNAL_TRANSPORTS))]),
    }
    attributes_schema = {
        "token": Attribute("Token for signalling the handle (TOKEN_SIGNAL; else None).",
                           Types.STRING),
        "endpoint": Attribute("URL signalling the handle (TOKEN_SIGNAL; else None).",
                              Types.STRING),
        "curl_cli": Attribute("Command prefix signalling the handle; add "
                              "--data-binary '{\"status\": \"SUCCESS\"}' (TOKEN_SIGNAL).",
                              Types.STRING),
        "signal": Attribute("JSON map of what a client needs to signal the handle.",
                            Types.STRING),
    }

    def normalise(self, details, received):
        # HeatWaitConditionHandle.normalise_signal_data: tolerate missing
        # values, default to success, number the signal.
        number = len(received) + 1
        metadata = dict(details) if isinstance(details, dict) else {}
        metadata.setdefault(self.REASON, f"Signal {number} received")
        metadata.setdefault(self.DATA, None)
        metadata.setdefault(self.UNIQUE_ID, number)
        metadata.setdefault(self.STATUS, SUCCESS)
        return metadata

    def _transport(self):
        return self.properties.get("signal_transport") or "TOKEN_SIGNAL"

    def get_attribute(self, name):
        if not self.physical_id:
            return None
        token_signal = self._transport() == "TOKEN_SIGNAL"
        token = self.context.data.get("token")
        if name == "token":
            return token if token_signal else None
        if name == "endpoint":
            return signal_url(self.context) if token_signal else None
        if name == "curl_cli":
            return curl_cli(self.context, token) if token_signal else None
        if name == "signal":
            # SignalResponder._get_signal: none for TOKEN_SIGNAL, {} for
            # NO_SIGNAL, the signal URL for the others.
            if token_signal:
                return json.dumps(None)
            if self._transport() == "NO_SIGNAL":
                return json.dumps({})
            return json.dumps({"alarm_url": signal_url(self.context)})
        return None


class UpdateWaitConditionHandle(_Handle):
    """``OS::Heat::UpdateWaitConditionHandle``: an AWS-style handle (its
    reference is its signal URL; signals carry ``Data``, ``Reason``,
    ``Status`` and ``UniqueId``) replaced by every update of the stack, so
    its signals are sent again for each update."""

    KEYS = (DATA, REASON, STATUS, UNIQUE_ID) = ("Data", "Reason", "Status", "UniqueId")
    properties_schema = {}
    attributes_schema = {}
    replace_on_every_update = True

    def reference_id(self):
        return signal_url(self.context)


class WaitCondition(base.DatabaseOnlyResource):
    """Waits until its handle got ``count`` SUCCESS signals; fails on a
    FAILURE signal or when ``timeout`` seconds pass first."""

    #: It waits for signals: never inside the resource lock's transaction.
    side_effects = True
    #: Resource's default kept: an update interrupted mid-wait replaces it.
    update_resumable = False
    id_prefix = "wait:"

    properties_schema = {
        "handle": Property(Types.STRING, "A reference to the wait condition handle "
                           "used to signal this wait condition.", required=True),
        "timeout": Property(Types.NUMBER, "Seconds to wait for the correct number of "
                            "signals to arrive.", required=True,
                            constraints=[constraints.Range(1, 43200)]),
        "count": Property(Types.INTEGER, "Number of success signals to receive before "
                          "the stack goes on.", default=1, update_allowed=True,
                          constraints=[constraints.Range(min=1)]),
    }
    attributes_schema = {
        "data": Attribute("JSON string of the data of the signals sent to the handle.",
                          Types.STRING),
    }

    def _handle(self):
        reference = self.properties.get("handle")
        found = self.context.signals.resource(reference)
        if found is None or not issubclass(self._handle_class(found[1]), _Handle):
            name = found[0] if found else reference
            raise ValueError(f"{name} is not a valid wait condition handle.")
        return found

    def _handle_class(self, type_name):
        registry = getattr(self.context.children, "registry", None)
        if registry is None:
            return type(None)
        try:
            return registry.get(type_name)
        except exceptions.NestedflowError:
            return type(None)

    def _statuses(self, handle_cls, name):
        reader = handle_cls.__new__(handle_cls)
        metadata = reader.metadata(self.context.signals.received(name))
        return handle_cls.STATUS, handle_cls.REASON, list(metadata.values())

    def _wait(self):
        """HeatWaitCondition._wait, until done: fail, time out or succeed."""
        name, type_name = self._handle()
        handle_cls = self._handle_class(type_name)
        count = self.properties.get("count") or 1
        timeout = float(self.properties["timeout"])
        outcome = {}

        def settled():
            status, reason, entries = self._statuses(handle_cls, name)
            failures = [e.get(reason) for e in entries if e.get(status) != SUCCESS]
            if failures:
                outcome["error"] = exceptions.WaitConditionFailure(failures)
                return True
            return len(entries) >= count

        started = time.monotonic()
        done = self.context.signals.wait(name, settled, timeout=timeout)
        if "error" in outcome:
            raise outcome["error"]
        if not done:
            status, reason, entries = self._statuses(handle_cls, name)
            raise exceptions.WaitConditionTimeout(
                [e.get(reason) for e in entries if e.get(status) == SUCCESS], count)
        self.context.data = {"waited": round(time.monotonic() - started, 3)}

    def create(self):
        self._wait()
        return super().create()

    def update(self, new_properties, old_properties):
        # HeatWaitCondition.handle_update waits again, with the new count.
        super().update(new_properties, old_properties)
        self._wait()

    def delete(self):
        # HeatWaitCondition.handle_delete: the handle's signals are cleared.
        try:
            name, _ = self._handle()
        except ValueError:
            return
        self.context.signals.forget(name)

    def get_attribute(self, name):
        if name != "data":
            return None
        try:
            handle, type_name = self._handle()
        except ValueError:
            return ""
        handle_cls = self._handle_class(type_name)
        reader = handle_cls.__new__(handle_cls)
        metadata = reader.metadata(self.context.signals.received(handle))
        return json.dumps({k: v.get(handle_cls.DATA) for k, v in metadata.items()})
