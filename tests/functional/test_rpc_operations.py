"""Previews, stored data, snapshots, abandon/adopt and tags through
EngineClient (RPC API 1.4) and a nestedflow-engine process; a client pinned
to 1.3 still creates stacks when it does not use 1.4's arguments."""

import pytest

from nestedflow import exceptions
from tests.functional.engine_services import EngineServices

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::TestResource",
                                "properties": {"value": "one"}}}}


@pytest.fixture
def services(pg_url, tmp_path):
    group = EngineServices(pg_url, tmp_path, count=1)
    yield group
    group.close()


def test_operations_through_rpc(services, stack_name):
    client = services.client()
    preview = client.preview_stack(stack_name, TEMPLATE)
    assert [r["resource_name"] for r in preview["resources"]] == ["a"]
    stack = client.create_stack(stack_name, TEMPLATE, tags=["web"])
    stack = client.wait(stack.id, timeout=60)
    assert list(client.get_stack(stack.id).tags) == ["web"]
    assert [s.id for s in client.list_stacks(tags="web") if s.id == stack.id] == [stack.id]
    assert client.get_template(stack.id) == TEMPLATE
    changed = {"heat_template_version": "2018-08-31",
               "resources": {"a": {"type": "OS::Heat::TestResource",
                                   "properties": {"value": "two"}}}}
    dry = client.preview_update_stack(stack.id, changed)
    assert [r["resource_name"] for r in dry["updated"]] == ["a"]
    snapshot = client.stack_snapshot(stack.id, "s1")
    assert snapshot["status"] == "COMPLETE"
    client.wait(client.update_stack(stack.id, changed, tags=["web"]).id, timeout=60)
    client.wait(client.restore_snapshot(stack.id, snapshot["id"]).id, timeout=60)
    assert client.list_resources(stack.id)[0].properties["value"] == "one"
    client.mark_resource_unhealthy(stack.id, "a", True, "broken")
    assert client.list_resources(stack.id)[0].status == "FAILED"
    with pytest.raises(exceptions.SnapshotNotFound):
        client.show_snapshot(stack.id, "nope")
    data = client.abandon_stack(stack.id)
    adopted = client.wait(client.create_stack(f"{stack_name}-2", None,
                                              adopt_stack_data=data).id, timeout=60)
    assert adopted.stack_status == "ADOPT_COMPLETE", adopted.status_reason
    assert client.list_resources(adopted.id)[0].physical_id == data["resources"]["a"][
        "resource_id"]


def test_a_client_pinned_to_1_3_still_creates(services, stack_name):
    client = services.client(version_cap="1.3")
    stack = client.wait(client.create_stack(stack_name, TEMPLATE).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE"
    with pytest.raises(Exception, match="1.4"):
        client.create_stack(f"{stack_name}-t", TEMPLATE, tags=["x"])
