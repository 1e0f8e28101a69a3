"""A software deployment waiting for its server's signal on a conductor
that dies: another conductor takes the stack over, the create runs again
and finds the deployment and derived config its first run stored; the
signal then completes it. Nothing is stored twice."""

import datetime
import time
import uuid

import pytest
from conductor_cluster import wait_for

pytestmark = pytest.mark.functional


def _template():
    return {"heat_template_version": "2018-08-31", "resources": {
        "server": {"type": "OS::Heat::DeployedServer"},
        "config": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"config": "echo hi", "outputs": [{"name": "result"}]}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
            "signal_transport": "HEAT_SIGNAL"}}},
        "outputs": {"result": {"value": {"get_attr": ["deployment", "result"]}}}}


@pytest.mark.parametrize("shared_db_url", ["postgresql"], indirect=True)
def test_deployment_waiting_on_a_killed_conductor(cluster, probe):
    cluster.start_many(["c1", "c2"])
    engine = cluster.engine()
    stack = engine.create_stack(f"swd-{uuid.uuid4().hex[:6]}", _template())

    def waiting():
        server = next((r.physical_id for r in engine.list_resources(stack.id)
                       if r.name == "server"), None)
        return [d for d in engine.list_software_deployments(server_id=server)
                if server and d["status"] == "IN_PROGRESS"]

    deployment = wait_for(waiting, 60, what="the deployment to wait for its signal")[0]
    started = [e for e in probe.events(stack.id) if e["resource_name"] == "deployment"
               and e["status"] == "IN_PROGRESS"]
    victim = cluster.conductors[started[0]["engine_id"]]
    cluster.kill(victim)
    killed = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    # The survivor takes the job over once the victim's session lapses and
    # runs the create again: it waits for the same deployment.
    wait_for(lambda: [e for e in probe.events(stack.id)
                      if e["resource_name"] == "deployment" and e["status"] == "IN_PROGRESS"
                      and e["engine_id"] not in (None, victim.name)], 60,
             what="the other conductor to run the deployment's create again")
    time.sleep(1)
    engine.signal_software_deployment(deployment["id"], {"deploy_status_code": 0,
                                                         "result": "done"})
    final = engine.wait(stack.id, timeout=60)
    assert final.stack_status == "CREATE_COMPLETE", final.status_reason
    assert final.outputs == {"result": "done"}
    ours = [d for d in engine.list_software_deployments() if d["id"] == deployment["id"]]
    assert len(ours) == 1 and ours[0]["status"] == "COMPLETE"
    assert [d["id"] for d in engine.list_software_deployments()
            if d["server_id"] == deployment["server_id"]] == [deployment["id"]]
    # The source config and one derived config: none made twice.
    names = [c["name"] for c in engine.list_software_configs()
             if c["name"].startswith(final.name)]
    assert len(names) == 2, names
    assert not [e for e in probe.events(stack.id)
                if e["engine_id"] == victim.name and e["timestamp"] >= killed]
    engine.wait(engine.delete_stack(stack.id).id, timeout=60)
    assert [d for d in engine.list_software_deployments() if d["id"] == deployment["id"]] == []
