"""The Engine API through EngineClient, RabbitMQ and two nestedflow-engine
processes sharing one PostgreSQL database (Must show 1 of the embedding issue)."""

import oslo_messaging as messaging
import pytest

from nestedflow import exceptions
from tests.functional.engine_services import EngineServices


def _template(value="one", wait_secs=0):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": {"type": "OS::Heat::TestResource",
                  "properties": {"value": value, "wait_secs": wait_secs}},
            "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
        },
        "outputs": {"value": {"value": {"get_attr": ["a", "output"]}}},
    }


@pytest.fixture
def services(pg_url, tmp_path):
    group = EngineServices(pg_url, tmp_path, count=2)
    yield group
    group.close()


def test_round_trip_through_two_engine_services(services, stack_name):
    client = services.client()
    created = client.create_stack(stack_name, _template())
    # An action returns once the traversal is stored.
    assert created.name == stack_name and created.stack_status == "CREATE_IN_PROGRESS"
    done = client.wait(created.id, timeout=60)
    assert done.stack_status == "CREATE_COMPLETE", done.status_reason
    assert client.get_stack(created.id).outputs == {"value": "one"}
    assert client.get_stack(stack_name).id == created.id
    assert created.id in [s.id for s in client.list_stacks()]
    resources = {r.name: r for r in client.list_resources(created.id)}
    assert {n: r.status for n, r in resources.items()} == {"a": "COMPLETE", "b": "COMPLETE"}
    assert resources["a"].properties["value"] == "one"
    events = client.list_events(created.id)
    assert {e.resource_name for e in events} == {stack_name, "a", "b"}
    assert events[0].timestamp <= events[-1].timestamp

    updated = client.update_stack(created.id, _template("two"))
    assert updated.action == "UPDATE"
    assert client.wait(created.id, timeout=60).stack_status == "UPDATE_COMPLETE"
    assert client.get_stack(created.id).outputs == {"value": "two"}

    # A slow update, cancelled (and rolled back) through whichever service
    # the call reaches -- not necessarily the one running the traversal.
    client.update_stack(created.id, _template("three", wait_secs=30))
    cancelled = client.cancel_update(created.id)
    assert cancelled.id == created.id
    rolled = client.wait(created.id, timeout=60)
    assert rolled.stack_status == "ROLLBACK_COMPLETE", rolled.status_reason
    assert client.get_stack(created.id).outputs == {"value": "two"}

    client.delete_stack(created.id)
    assert client.wait(created.id, timeout=60).stack_status == "DELETE_COMPLETE"
    assert created.id not in [s.id for s in client.list_stacks()]
    # Calls went round-robin to both services: both ran traversals.
    engines = {e.engine_id for e in client.list_events(created.id) if e.engine_id}
    assert len(engines) == 2, engines


def test_errors_arrive_as_the_engine_raised_them(services, stack_name):
    client = services.client()
    with pytest.raises(exceptions.StackNotFound) as found:
        client.get_stack("no-such-stack")
    assert type(found.value) is exceptions.StackNotFound
    assert str(found.value) == "Stack no-such-stack not found"
    assert found.value.stack_id == "no-such-stack"

    bad = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Heat::TestResource", "properties": {"nope": 1}}}}
    with pytest.raises(exceptions.StackValidationFailed) as rejected:
        client.create_stack(stack_name, bad)
    assert "resources.x.properties" in str(rejected.value)
    assert rejected.value.path.startswith("resources.x")
    with pytest.raises(exceptions.StackNotFound):  # nothing was stored
        client.get_stack(stack_name)

    with pytest.raises(exceptions.WaitTimeout, match=r"still CREATE_IN_PROGRESS after 1s"):
        stack = client.create_stack(stack_name, _template(wait_secs=5))
        client.wait(stack.id, timeout=1)


def test_client_pinned_to_1_0_keeps_working(services, stack_name):
    old = services.client(version_cap="1.0")
    new = services.client()
    stack = old.create_stack(stack_name, _template())
    assert old.wait(stack.id, timeout=60).stack_status == "CREATE_COMPLETE"
    listed = [s.name for s in old.list_stacks()]
    assert stack_name in listed
    # count_stacks came with 1.1: the new client has it, the pinned one refuses it.
    assert new.count_stacks() == len(listed)
    with pytest.raises(messaging.RPCVersionCapError):
        old.count_stacks()
    # validate_template came with 1.2 (Heat's validate answer, nothing stored).
    answer = new.validate_template(_template())
    assert set(answer) >= {"Description", "Parameters", "Environment"}
    with pytest.raises(exceptions.StackValidationFailed, match="unknown resource .nope."):
        new.validate_template({"heat_template_version": "2015-04-30",
                               "outputs": {"o": {"value": {"get_attr": ["nope", "x"]}}}})
    with pytest.raises(messaging.RPCVersionCapError):
        services.client(version_cap="1.1").validate_template(_template())


def test_tenancy_through_rpc(services, stack_name):
    from oslo_context import context as oslo_context

    def ctx(project, admin=False):
        return oslo_context.RequestContext(project_id=project, user_id="u", is_admin=admin,
                                           overwrite=False)

    a, b, admin = ctx("rpc-a"), ctx("rpc-b"), ctx("ops", admin=True)
    client = services.client()
    stack = client.create_stack(stack_name, _template(), context=a)
    assert client.wait(stack.id, timeout=60, context=a).project_id == "rpc-a"
    for call in (client.get_stack, client.delete_stack, client.list_resources,
                 lambda s, context: client.update_stack(s, _template("x"), context=context)):
        with pytest.raises(exceptions.StackNotFound, match=f"Stack {stack.id} not found"):
            call(stack.id, context=b)
    assert stack.id not in [s.id for s in client.list_stacks(context=b)]
    assert [s.id for s in client.list_stacks(context=a)] == [stack.id]
    assert stack.id in [s.id for s in client.list_stacks(context=admin)]
    client.delete_stack(stack.id, context=admin)
    assert client.wait(stack.id, timeout=60, context=a).stack_status == "DELETE_COMPLETE"


def test_every_view_crosses_the_wire():
    """Each result type an RPC method returns comes back as itself."""
    import datetime

    from nestedflow.engine import checks, views
    from nestedflow.rpc import api

    now = datetime.datetime(2026, 11, 24, 19, 0, 0, 123456)
    samples = [
        views.Stack(id="i", name="n", action="CREATE", status="COMPLETE", status_reason="",
                    outputs={"o": [1]}, parent_id=None, disable_rollback=False,
                    created_at=now, updated_at=None, project_id="p"),
        views.Event(id=1, timestamp=now, resource_name="r", action="CREATE",
                    status="COMPLETE", status_reason="", physical_id=None, engine_id="e"),
        checks.CheckResult(resource_name="r", action="CREATE", phase="pre", check="c",
                           type="plugin", status="PASS", message="", duration=0.5,
                           attempts=1, timestamp=now, traversal_id=None),
    ]
    serializer = api.EngineSerializer()
    wire = serializer.serialize_entity(None, samples)
    assert serializer.deserialize_entity(None, wire) == samples


def test_1_6_list_services_and_validate_template_options(services):
    """RPC 1.6: list_services (Heat's, from the engine heartbeats: each
    nestedflow-engine beats from its start) and validate_template's
    show_nested and ignorable_errors, refused by a client pinned to 1.5
    only when given."""
    client, old = services.client(), services.client(version_cap="1.5")
    found = {s["engine_id"].rsplit("-", 2)[0]: s for s in client.list_services()
             if s["engine_id"].startswith(("engine-engine0-", "engine-engine1-"))}
    assert sorted(found) == ["engine-engine0", "engine-engine1"]
    assert {(s["binary"], s["status"]) for s in found.values()} == {("nestedflow-engine", "up")}
    with pytest.raises(messaging.RPCVersionCapError):
        old.list_services()
    nested = {"heat_template_version": "2018-08-31",
              "resources": {"s": {"type": "OS::Heat::Stack", "properties": {
                  "template": {"heat_template_version": "2018-08-31",
                               "parameters": {"p": {"type": "string"}}},
                  "parameters": {"p": "v"}}}}}
    answer = client.validate_template(nested, show_nested=True, ignorable_errors=["99001"])
    assert answer["NestedParameters"]["s"]["Parameters"]["p"]["Value"] == "v"
    assert "NestedParameters" not in old.validate_template(nested)
    with pytest.raises(messaging.RPCVersionCapError):
        old.validate_template(nested, show_nested=True)
    with pytest.raises(exceptions.StackValidationFailed, match="Invalid codes in ignore_errors"):
        client.validate_template(nested, ignorable_errors=["1"])
