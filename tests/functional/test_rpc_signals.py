"""Signals through EngineClient (RPC API 1.5) and a nestedflow-engine
process: a wait condition released by signals sent over RPC, a signal to a
type that takes none refused with the same error class as in-process
(heat/engine/service.py resource_signal, Resource._handle_signal)."""

import json
import time

import pytest

from nestedflow import exceptions
from tests.functional.engine_services import EngineServices
from tests.functional.test_wait_conditions import template


@pytest.fixture
def services(pg_url, tmp_path):
    group = EngineServices(pg_url, tmp_path, count=1)
    yield group
    group.close()


def test_signals_over_rpc(services, stack_name):
    client = services.client()
    extra = {"plain": {"type": "OS::Heat::TestResource"}}
    stack = client.create_stack(stack_name, template(count=2, extra=extra))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        states = {r.name: (r.action, r.status) for r in client.list_resources(stack.id)}
        if states.get("wait") == ("CREATE", "IN_PROGRESS"):
            break
        time.sleep(0.2)
    client.signal_resource(stack.id, "handle", {"data": "a", "id": "1"})
    client.signal_resource(stack.id, "handle", {"data": "b", "id": "2"})
    done = client.wait(stack.id, timeout=120)
    assert done.stack_status == "CREATE_COMPLETE", done.status_reason
    assert json.loads(done.outputs["data"]) == {"1": "a", "2": "b"}
    with pytest.raises(exceptions.ResourceActionNotSupported,
                       match="signal is not supported for resource plain"):
        client.signal_resource(stack.id, "plain", {})
    with pytest.raises(exceptions.InvalidBreakPointHook):
        client.signal_resource(stack.id, "plain", {"unset_hook": "pre-create"})
