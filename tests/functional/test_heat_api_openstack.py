"""``openstack stack ...`` (python-openstackclient and python-heatclient,
unmodified, from the peer virtualenv) through Heat's own heat-api to
nestedflow-engine: the round trip, Heat's error codes and messages, and
two projects kept apart -- with the traversals run in the engine's
process, and by three conductors on ZooKeeper (issue 28, Must show 3).
"""

import json

import pytest
import yaml
from conductor_cluster import Cluster, Probe

from tests.conftest import PG_URL, reset_database
from tests.functional.heat_api import HeatApi

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "description": "round trip",
    "parameters": {"value": {"type": "string", "default": "one"}},
    "resources": {
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_param": "value"}}},
        "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
    },
    "outputs": {"out": {"description": "the value", "value": {"get_attr": ["a", "output"]}}},
}


@pytest.fixture
def in_process(heat_api):
    return heat_api


@pytest.fixture(scope="module")
def with_conductors(tmp_path_factory, zk):
    tmp = tmp_path_factory.mktemp("heat-api-conductors")
    cluster = Cluster(reset_database(PG_URL), tmp, zk)
    cluster.engine()  # migrates the database before any conductor starts
    api = None
    try:
        cluster.start_many(["c1", "c2", "c3"])
        api = HeatApi(cluster.db_url, tmp, jobboard_url=cluster.jobboard_url)
        api.cluster = cluster
        yield api
    finally:
        if api is not None:
            api.close()
        cluster.close()


@pytest.fixture(params=["in_process", "with_conductors"])
def heat(request):
    api = request.getfixturevalue(request.param)
    api.full = request.param == "in_process"
    return api


def test_openstack_stack_round_trip(heat, tmp_path, stack_name):
    template = tmp_path / "t.yaml"
    template.write_text(yaml.safe_dump(TEMPLATE))
    os_ = heat.openstack

    created = os_("stack", "create", "-t", str(template), stack_name, "--wait")
    assert "CREATE_COMPLETE" in created.stdout, created.stdout
    shown = heat.openstack_json("stack", "show", stack_name)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["description"] == "round trip"
    assert shown["parameters"]["value"] == "one"
    assert shown["outputs"] == [{"output_key": "out", "description": "the value",
                                 "output_value": "one"}]
    stack_id = shown["id"]

    # PUT: a new template or parameters; PATCH (--existing): the stored ones kept.
    os_("stack", "update", "-t", str(template), "--parameter", "value=two", stack_name,
        "--wait")
    assert heat.stack(stack_name)["stack_status"] == "UPDATE_COMPLETE"
    os_("stack", "update", "--existing", "--parameter", "value=three", stack_name, "--wait")
    assert heat.openstack_json("stack", "output", "show", stack_name, "out") == {
        "output_key": "out", "description": "the value", "output_value": "three"}

    resources = {r["resource_name"]: r for r in
                 heat.openstack_json("stack", "resource", "list", stack_name)}
    assert {n: (r["resource_type"], r["resource_status"]) for n, r in resources.items()} == {
        "a": ("OS::Heat::TestResource", "UPDATE_COMPLETE"),
        "b": ("OS::Heat::None", "CREATE_COMPLETE")}
    a = heat.openstack_json("stack", "resource", "show", stack_name, "a")
    assert a["attributes"] == {"output": "three"}
    assert a["required_by"] == ["b"]
    assert a["physical_resource_id"] == resources["a"]["physical_resource_id"]

    if heat.full:
        _events_and_validate(heat, stack_name, template)
    else:
        probe = Probe(heat.cluster.db_url)
        try:
            ran = {e["engine_id"] for e in probe.events(stack_id) if e["resource_name"]}
        finally:
            probe.close()
        assert ran and ran <= {"c1", "c2", "c3"}, ran
    _snapshot_abandon_adopt_delete(heat, stack_name, stack_id, tmp_path, full=heat.full)


def _events_and_validate(heat, stack_name, template):
    """What only the engine's own process answers (no traversal): once."""
    events = heat.openstack_json("stack", "event", "list", stack_name)
    stack_events = [(e["resource_status"]) for e in events if e["resource_name"] == stack_name]
    assert stack_events[:2] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"], events
    assert stack_events[-1] == "UPDATE_COMPLETE"
    event = heat.openstack_json("stack", "event", "show", stack_name, "a", events[1]["id"])
    assert event["resource_name"] == "a" and event["resource_status"] == "CREATE_IN_PROGRESS"

    validated = yaml.safe_load(heat.openstack("orchestration", "template", "validate", "-t",
                                              str(template)).stdout)
    assert validated["Description"] == "round trip"
    assert validated["Parameters"]["value"]["Default"] == "one"


def _snapshot_abandon_adopt_delete(heat, stack_name, stack_id, tmp_path, full):
    """The traversals behind snapshot restore, adopt and delete (with
    conductors: the restore and the adopt through REST, to keep the
    command-line startups -- 2.4 s each here -- to the in-process run)."""
    os_ = heat.openstack

    # Snapshot, change, restore: back to the snapshot's value.
    snapshot = heat.openstack_json("stack", "snapshot", "create", stack_name, "--name", "s1")
    assert snapshot["status"] == "COMPLETE", snapshot
    status, body = heat.request("PATCH", f"/stacks/{stack_name}/{stack_id}",
                                {"parameters": {"value": "four"}})
    assert status == 202, body
    assert heat.wait_settled(stack_name)["outputs"][0]["output_value"] == "four"
    if full:
        assert [s["id"] for s in heat.openstack_json("stack", "snapshot", "list",
                                                     stack_name)] == [snapshot["ID"]]
        os_("stack", "snapshot", "restore", stack_name, snapshot["ID"])
    else:
        status, body = heat.request(
            "POST", f"/stacks/{stack_name}/{stack_id}/snapshots/{snapshot['ID']}/restore")
        assert status == 202, body
    restored = heat.wait_settled(stack_name)
    # Heat's Stack.restore ends RESTORE_COMPLETE.
    assert restored["stack_status"] == "RESTORE_COMPLETE", restored
    assert restored["outputs"][0]["output_value"] == "three"

    # Abandon leaves the objects; adopt takes them over under a new stack.
    abandon_file = tmp_path / "abandon.json"
    os_("stack", "abandon", stack_name, "--output-file", str(abandon_file))
    abandoned = json.loads(abandon_file.read_text())
    assert abandoned["id"] == stack_id
    status, _ = heat.request("GET", f"/stacks/{stack_name}")
    assert status == 404
    adopted_name = f"{stack_name}-adopted"
    if full:
        os_("stack", "adopt", "--adopt-file", str(abandon_file), adopted_name)
    else:
        status, body = heat.request("POST", "/stacks", {
            "stack_name": adopted_name, "adopt_stack_data": abandon_file.read_text()})
        assert status == 201, body
    # Heat's Stack.adopt ends ADOPT_COMPLETE.
    assert heat.wait_settled(adopted_name)["stack_status"] == "ADOPT_COMPLETE"
    status, body = heat.request("GET", f"/stacks/{adopted_name}/resources", follow=True)
    adopted = {r["resource_name"]: r["physical_resource_id"] for r in body["resources"]}
    assert adopted == {name: r["resource_id"] for name, r in abandoned["resources"].items()}
    assert heat.stack(adopted_name)["outputs"][0]["output_value"] == "three"

    deleted = os_("stack", "delete", adopted_name, "--wait", "-y")
    assert deleted.returncode == 0
    assert adopted_name not in [s["Stack Name"] for s in
                                heat.openstack_json("stack", "list")]


def test_heat_error_codes_and_messages(in_process, stack_name):
    """heat-api maps the engine's errors by Heat's class names
    (heat/api/middleware/fault.py): 404, 409, 400 with Heat's messages."""
    heat = in_process
    status, body = heat.request("GET", "/stacks/nosuch")
    assert status == 404, body
    assert body["error"]["type"] == "EntityNotFound"
    assert body["error"]["message"] == "The Stack (nosuch) could not be found."
    missing = heat.openstack("stack", "show", "nosuch", check=False)
    assert missing.returncode == 1 and "Stack not found: nosuch" in missing.stderr

    status, body = heat.request("POST", "/stacks", {"stack_name": stack_name,
                                                    "template": TEMPLATE})
    assert status == 201, body
    status, body = heat.request("POST", "/stacks", {"stack_name": stack_name,
                                                    "template": TEMPLATE})
    assert status == 409, body
    assert body["error"] == {"type": "StackExists", "traceback": None,
                             "message": f"The Stack ({stack_name}) already exists."}

    bad = {"heat_template_version": "2018-08-31",
           "resources": {"x": {"type": "OS::Nope"}}}
    status, body = heat.request("POST", "/stacks", {"stack_name": f"{stack_name}-bad",
                                                    "template": bad})
    assert status == 400, body
    assert body["error"]["type"] == "StackValidationFailed"
    # heat/engine/environment.py get_class_to_instantiate's message.
    assert body["error"]["message"] == "The Resource Type (OS::Nope) could not be found."
    status, body = heat.request("POST", "/validate", {"template": bad})
    assert status == 400 and "The Resource Type (OS::Nope) could not be found." in str(body)

    status, body = heat.request("GET", f"/stacks/{stack_name}")
    assert status == 302
    status, body = heat.request("GET", f"/stacks/{stack_name}/outputs/nope")
    assert status in (302, 404)


def test_two_projects_see_only_their_own_stacks(in_process, stack_name):
    """noauth takes the project from ``X-Auth-Project``; each project lists
    and finds by name only its own stacks (the same name in both)."""
    heat = in_process
    ids = {}
    for project in ("proj-a", "proj-b"):
        status, body = heat.request("POST", "/stacks", {"stack_name": stack_name,
                                                        "template": TEMPLATE},
                                    project=project)
        assert status == 201, body
        ids[project] = body["stack"]["id"]
    assert ids["proj-a"] != ids["proj-b"]
    for project, other in (("proj-a", "proj-b"), ("proj-b", "proj-a")):
        status, body = heat.request("GET", "/stacks", project=project)
        listed = {s["id"]: s for s in body["stacks"]}
        assert ids[project] in listed and ids[other] not in listed
        assert {s["project"] for s in body["stacks"]} == {project}
        status, body = heat.request("GET", f"/stacks/{stack_name}", project=project)
        assert status == 302, body
        status, body = heat.request("GET", f"/stacks/{stack_name}/{ids[other]}",
                                    project=project)
        # Heat lets an admin (every noauth caller is one) read any project's
        # stack by id -- but not under another stack's name.
        status, _ = heat.request("GET", f"/stacks/other-name/{ids[other]}", project=project)
        assert status == 404
