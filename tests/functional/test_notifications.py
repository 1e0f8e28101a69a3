"""Heat-format notifications received by a real oslo.messaging notification
listener on RabbitMQ (Must show 3 of the embedding issue), and in-process
subscriptions. Event types and payload fields follow
heat.engine.notification.stack.send and heat.engine.api.format_notification_body."""

import json
import os
import threading
import time
import uuid

import oslo_messaging as messaging
import pytest
from oslo_config import cfg
from oslo_context import context as oslo_context

from nestedflow.conf import CONF
from nestedflow.messaging import transport

RABBIT = os.environ.get("NESTEDFLOW_TEST_RABBIT", "rabbit://guest:guest@127.0.0.1:5672/")
SECRET = "s3cret-" + uuid.uuid4().hex
HEAT_STACK_FIELDS = {"tenant_id", "user_id", "user_identity", "username", "stack_identity",
                     "stack_name", "state", "state_reason", "create_at", "description",
                     "updated_at", "tags"}
RESOURCE_FIELDS = {"tenant_id", "user_identity", "stack_identity", "stack_name",
                   "resource_name", "physical_resource_id", "resource_action",
                   "resource_status", "resource_status_reason", "resource_type", "event_time"}


def _template(fail=False):
    return {
        "heat_template_version": "2018-08-31",
        "description": "notified",
        "parameters": {"password": {"type": "string", "hidden": True}},
        "resources": {
            "a": {"type": "OS::Heat::TestResource",
                  "properties": {"value": {"get_param": "password"}, "fail": fail}},
        },
    }


class _Collector:
    def __init__(self):
        self.received = []
        self.lock = threading.Lock()

    def _add(self, ctxt, publisher_id, event_type, payload, metadata):
        with self.lock:
            self.received.append((event_type, payload, ctxt, publisher_id))

    info = error = _add

    def types(self, stack_id):
        with self.lock:
            return [t for t, p, _, _ in self.received if p.get("stack_identity") == stack_id]

    def wait_for(self, stack_id, event_type, timeout=30):
        deadline = time.monotonic() + timeout
        while event_type not in self.types(stack_id):
            assert time.monotonic() < deadline, (event_type, self.types(stack_id))
            time.sleep(0.05)


@pytest.fixture
def listener():
    topic = f"nftest-notify-{uuid.uuid4().hex[:10]}"
    transport.register_opts(CONF)
    CONF.set_override("driver", ["messagingv2"], group="oslo_messaging_notifications")
    CONF.set_override("topics", [topic], group="oslo_messaging_notifications")
    conf = cfg.ConfigOpts()
    notify_transport = messaging.get_notification_transport(conf, url=RABBIT)
    collector = _Collector()
    server = messaging.get_notification_listener(
        notify_transport, [messaging.Target(topic=topic)], [collector], executor="threading")
    server.start()
    yield collector
    server.stop()
    server.wait()
    notify_transport.cleanup()
    CONF.clear_override("driver", group="oslo_messaging_notifications")
    CONF.clear_override("topics", group="oslo_messaging_notifications")


def test_heat_notifications_on_rabbitmq(listener, make_engine, pg_url, stack_name):
    engine = make_engine(pg_url, transport_url=RABBIT)
    ctx = oslo_context.RequestContext(project_id="proj-n", user_id="user-n",
                                      auth_token="token-n", overwrite=False)
    stack = engine.create_stack(stack_name, _template(), parameters={"password": SECRET},
                                context=ctx)
    assert engine.wait(stack.id).stack_status == "CREATE_COMPLETE"
    listener.wait_for(stack.id, "orchestration.stack.create.end")

    update_ctx = oslo_context.RequestContext(project_id="proj-n", user_id="user-n",
                                             overwrite=False)
    engine.update_stack(stack.id, _template(fail=True), parameters={"password": SECRET},
                        context=update_ctx)
    assert engine.wait(stack.id).stack_status == "ROLLBACK_COMPLETE"
    listener.wait_for(stack.id, "orchestration.stack.rollback.end")

    engine.delete_stack(stack.id, context=ctx)
    assert engine.wait(stack.id).stack_status == "DELETE_COMPLETE"
    listener.wait_for(stack.id, "orchestration.stack.delete.end")

    stack_types = [t for t in listener.types(stack.id) if t.startswith("orchestration.stack.")]
    assert stack_types == [
        "orchestration.stack.create.start", "orchestration.stack.create.end",
        # As Heat's update_task: a failed update with rollback goes on as a
        # ROLLBACK (no update.error).
        "orchestration.stack.update.start", "orchestration.stack.rollback.start",
        "orchestration.stack.rollback.end",
        "orchestration.stack.delete.start", "orchestration.stack.delete.end"]
    resource_types = set(listener.types(stack.id)) - set(stack_types)
    assert {"orchestration.resource.create.start", "orchestration.resource.create.end",
            "orchestration.resource.update.error",
            "orchestration.resource.delete.end"} <= resource_types

    with listener.lock:
        mine = [r for r in listener.received if r[1].get("stack_identity") == stack.id]
    for event_type, payload, ctxt, publisher in mine:
        assert publisher.startswith("orchestration.")
        fields = HEAT_STACK_FIELDS if ".stack." in event_type else RESOURCE_FIELDS
        assert set(payload) == fields, event_type
        assert payload["tenant_id"] == "proj-n" and payload["user_identity"] == "user-n"
        # Hidden parameters (and tokens) appear in no payload and no context.
        assert SECRET not in json.dumps(payload) and SECRET not in json.dumps(ctxt)
        assert "token-n" not in json.dumps(ctxt)
        expected = update_ctx if event_type.split(".")[2] in ("update", "rollback") \
            and ".stack." in event_type else None
        if expected is not None and not event_type.endswith(".start"):
            assert ctxt.get("request_id") == expected.request_id, [(t, c) for t, _, c, _ in mine]
    end = next(p for t, p, _, _ in mine if t == "orchestration.stack.create.end")
    assert end["state"] == "CREATE_COMPLETE" and end["stack_name"] == stack_name
    assert end["description"] == "notified" and end["create_at"].endswith("Z")
    rolled = next(p for t, p, _, _ in mine if t == "orchestration.stack.rollback.end")
    assert rolled["state"] == "ROLLBACK_COMPLETE"
    assert rolled["state_reason"] == "resources.a: Test Resource failed"
    create_start = next(c for t, _, c, _ in mine if t == "orchestration.stack.create.start")
    assert create_start["request_id"] == ctx.request_id


def test_subscribe_in_process_without_a_broker(sqlite_engine, stack_name):
    seen = []
    unsubscribe = sqlite_engine.subscribe(lambda *args: seen.append(args))
    stack = sqlite_engine.create_stack(stack_name, _template(), parameters={"password": SECRET})
    sqlite_engine.wait(stack.id)
    # wait() may wake before the settle's notification went out.
    deadline = time.monotonic() + 10
    while "orchestration.stack.create.end" not in [t for t, _, _ in seen]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    unsubscribe()
    sqlite_engine.delete_stack(stack.id)
    sqlite_engine.wait(stack.id)
    types = [t for t, _, _ in seen]
    assert types[0] == "orchestration.stack.create.start"
    assert types[-1] == "orchestration.stack.create.end"
    assert "orchestration.resource.create.end" in types
    assert not any("delete" in t for t in types)
    assert all(SECRET not in json.dumps(p) for _, p, _ in seen)
