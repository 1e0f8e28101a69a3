"""Heat's config and deployment types: create, an in-place and a replacing
update, delete and rollback, with Heat's stored configs, attribute values
and states (each test names the Heat code it follows)."""

import email
import threading
import time

import pytest
import yaml

from nestedflow import exceptions
from tests.functional import heat_type_lifecycle as lc

pytestmark = pytest.mark.functional


def _configs(engine):
    return {c["id"]: c for c in engine.list_software_configs()}


def test_software_config(engine, stack_name):
    """heat/engine/resources/openstack/heat/software_config.py (test_software_config.py
    test_handle_create, test_resolve_attribute): the config is stored with
    Heat's defaults (group Heat::Ungrouped, inputs typed String) under
    physical_resource_name(); attribute ``config``; no property updates in
    place: a change stores a new config and deletes the old one."""
    outputs = {"config": {"get_attr": ["r", "config"]}}
    base = {"type": "OS::Heat::SoftwareConfig",
            "properties": {"config": "#!/bin/sh\necho one", "inputs": [{"name": "foo"}],
                           "outputs": [{"name": "result", "error_output": True}]}}
    changed = {"type": "OS::Heat::SoftwareConfig",
               "properties": {"config": "#!/bin/sh\necho two", "group": "script"}}
    before = set(_configs(engine))
    steps = lc.run(engine, stack_name, base, base, changed, outputs)
    assert steps.outputs["create"] == {"config": "#!/bin/sh\necho one"}
    assert steps.outputs["replace"] == {"config": "#!/bin/sh\necho two"}
    assert steps.events["create"] == lc.CREATED
    assert steps.events["inplace"] == []  # nothing changed: nothing to do
    assert steps.events["replace"] == lc.REPLACED
    assert steps.ids["replace"] != steps.ids["create"]
    assert steps.events["delete"] == lc.DELETED
    assert set(_configs(engine)) == before  # every config it stored is gone

    stack = engine.wait(engine.create_stack(f"{stack_name}-2", lc.template(base, {})).id, 60)
    shown = engine.show_software_config(lc.physical_id(engine, stack.id))
    assert shown["name"].startswith(f"{stack_name}-2-r-")
    assert (shown["group"], shown["options"]) == ("Heat::Ungrouped", {})
    assert shown["inputs"] == [{"name": "foo", "type": "String"}]
    assert shown["outputs"] == [{"name": "result", "type": "String", "error_output": True}]

    rolled, events = lc.rollback(engine, f"{stack_name}-rb", base, outputs)
    assert rolled.stack_status == "ROLLBACK_COMPLETE", rolled.status_reason
    assert events == lc.CREATED + lc.DELETED
    assert set(_configs(engine)) - before == {shown["id"]}
    engine.wait(engine.delete_stack(stack.id).id, 60)  # the session's database is shared
    assert set(_configs(engine)) == before


@pytest.mark.parametrize("case", ["structured", "cloud", "component", "multipart"])
def test_config_types(sqlite_engine, stack_name, case):
    """structured_config.py (config is a map, stored as it is),
    cloud_config.py (test_cloud_config.py: ``#cloud-config`` + the YAML),
    software_component.py (test_software_component.py test_resolve_attribute:
    configs with actions defaulting to CREATE, UPDATE; group ``component``),
    multi_part.py (test_multi_part.py test_get_message_text: one MIME part
    per part, a config id replaced by that config's text). No property of
    any updates in place."""
    engine = sqlite_engine
    cases = {
        "structured": ("OS::Heat::StructuredConfig", "config",
                       {"config": {"a": {"get_input": "x"}}}, {"config": {"b": 2}}),
        "cloud": ("OS::Heat::CloudConfig", "config", {"cloud_config": {"foo": "bar"}},
                  {"cloud_config": {"foo": "baz"}}),
        "component": ("OS::Heat::SoftwareComponent", "configs",
                      {"configs": [{"config": "one", "tool": "script"}]},
                      {"configs": [{"actions": ["DELETE"], "config": "x", "tool": "puppet"}]}),
        "multipart": ("OS::Heat::MultipartMime", "config",
                      {"parts": [{"config": "#!/bin/sh\necho a", "subtype": "x-shellscript"},
                                 {"config": "b: 1", "filename": "cloud-config"}]},
                      {"parts": [{"config": "only"}]}),
    }
    type_name, attr, props, changed_props = cases[case]
    outputs = {"value": {"get_attr": ["r", attr]}}
    base = {"type": type_name, "properties": props}
    changed = {"type": type_name, "properties": changed_props}
    steps = lc.run(engine, stack_name, base, base, changed, outputs)
    value = steps.outputs["create"]["value"]
    if case == "structured":
        assert value == {"a": {"get_input": "x"}}
        assert steps.outputs["replace"]["value"] == {"b": 2}
    elif case == "cloud":
        assert value == "\n".join(["#cloud-config", yaml.safe_dump({"foo": "bar"})])
    elif case == "component":
        assert value == [{"actions": ["CREATE", "UPDATE"], "config": "one", "tool": "script"}]
    else:
        parts = email.message_from_string(value).get_payload()
        assert [(p.get_content_subtype(), p.get_payload(), p.get_filename()) for p in parts] \
            == [("x-shellscript", "#!/bin/sh\necho a", None),
                ("cloud-config", "b: 1", "cloud-config")]
    assert steps.events["create"] == lc.CREATED
    assert steps.events["replace"] == lc.REPLACED
    assert steps.ids["replace"] != steps.ids["create"]
    assert steps.events["delete"] == lc.DELETED
    rolled, events = lc.rollback(engine, f"{stack_name}-rb", base, outputs)
    assert rolled.stack_status == "ROLLBACK_COMPLETE"
    assert events == lc.CREATED + lc.DELETED
    assert engine.list_software_configs() == []


def test_component_refuses_two_configs_for_one_action(sqlite_engine, stack_name):
    """SoftwareComponent.validate (test_software_component.py test_validate)."""
    with pytest.raises(exceptions.StackValidationFailed, match="same action"):
        sqlite_engine.create_stack(stack_name, lc.template(
            {"type": "OS::Heat::SoftwareComponent", "properties": {"configs": [
                {"actions": ["CREATE"], "config": "a", "tool": "script"},
                {"actions": ["CREATE", "UPDATE"], "config": "b", "tool": "script"}]}}, {}))


def _deployment_template(props, config_props=None, deployment_type="OS::Heat::SoftwareDeployment"):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "server": {"type": "OS::Heat::DeployedServer"},
            "other": {"type": "OS::Heat::DeployedServer"},
            "config": {"type": "OS::Heat::SoftwareConfig", "properties": config_props or {
                "config": "echo hi", "inputs": [{"name": "foo"},
                                                {"name": "bar", "default": "dflt"}],
                "outputs": [{"name": "result"}]}},
            "r": {"type": deployment_type, "properties": {
                "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
                **props}},
        },
        "outputs": {"stdout": {"value": {"get_attr": ["r", "deploy_stdout"]}},
                    "result": {"value": {"get_attr": ["r", "result"]}}},
    }


def _deployment(engine, stack_id):
    deployment = engine.show_software_deployment(lc.physical_id(engine, stack_id))
    return deployment, engine.show_software_config(deployment["config_id"])


def test_software_deployment_no_signal(engine, stack_name):
    """software_deployment.py with NO_SIGNAL: COMPLETE at once, "Not waiting
    for outputs signal" (_build_properties); the derived config carries the
    input values, declared defaults, undeclared values and Heat's deploy_*
    inputs (_build_derived_inputs; test_software_deployment.py
    test_build_derived_config_params); input_values update in place (a new
    derived config, the old one deleted: handle_update); server replaces."""
    props = {"signal_transport": "NO_SIGNAL", "input_values": {"foo": "one", "extra": 1}}
    # The database may hold other tests' stacks (PostgreSQL's and MariaDB's
    # are per session).
    configs_before = set(_configs(engine))
    deployments_before = {d["id"] for d in engine.list_software_deployments()}
    stack = engine.wait(engine.create_stack(stack_name, _deployment_template(props)).id, 60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    deployment, derived = _deployment(engine, stack.id)
    assert (deployment["action"], deployment["status"], deployment["status_reason"]) == (
        "CREATE", "COMPLETE", "Not waiting for outputs signal")
    server = lc.physical_id(engine, stack.id, "server")
    assert deployment["server_id"] == server
    assert deployment["input_values"] == {"foo": "one", "extra": 1}
    values = {i["name"]: i["value"] for i in derived["inputs"]}
    assert values == {"foo": "one", "bar": "dflt", "extra": 1, "deploy_server_id": server,
                      "deploy_action": "CREATE",
                      "deploy_stack_id": f"{stack_name}/{stack.id}",
                      "deploy_resource_name": "r", "deploy_signal_transport": "NO_SIGNAL"}
    assert derived["config"] == "echo hi" and derived["name"].startswith(f"{stack_name}-config-")
    assert stack.outputs == {"stdout": None, "result": None}
    assert lc.resource_events(engine, stack.id) == lc.CREATED

    first_id, first_config = deployment["id"], deployment["config_id"]
    props["input_values"] = {"foo": "two"}
    stack = engine.wait(engine.update_stack(stack.id, _deployment_template(props)).id, 60)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    deployment, derived = _deployment(engine, stack.id)
    assert (deployment["id"], deployment["action"]) == (first_id, "UPDATE")
    assert {i["name"]: i["value"] for i in derived["inputs"]}["foo"] == "two"
    with pytest.raises(exceptions.SoftwareConfigNotFound):
        engine.show_software_config(first_config)
    assert lc.resource_events(engine, stack.id)[2:] == lc.UPDATED

    template = _deployment_template(props)
    template["resources"]["r"]["properties"]["server"] = {"get_resource": "other"}
    stack = engine.wait(engine.update_stack(stack.id, template).id, 60)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    deployment, _ = _deployment(engine, stack.id)
    assert deployment["id"] != first_id
    assert deployment["server_id"] == lc.physical_id(engine, stack.id, "other")
    assert lc.resource_events(engine, stack.id)[4:] == lc.REPLACED
    assert {d["id"] for d in engine.list_software_deployments()} - deployments_before == {
        deployment["id"]}

    stack = engine.wait(engine.delete_stack(stack.id).id, 60)
    assert stack.stack_status == "DELETE_COMPLETE"
    assert lc.resource_events(engine, stack.id)[8:] == lc.DELETED
    assert {d["id"] for d in engine.list_software_deployments()} == deployments_before
    assert set(_configs(engine)) == configs_before

    # A create rolled back deletes the deployment and its derived config.
    for type_name in ("OS::Heat::SoftwareDeployment", "OS::Heat::StructuredDeployment"):
        rolled, events = lc.rollback(engine, f"{stack_name}-{type_name[10:]}", {
            "type": type_name, "properties": {"server": "srv",
                                              "signal_transport": "NO_SIGNAL"}}, {})
        assert rolled.stack_status == "ROLLBACK_COMPLETE", rolled.status_reason
        assert events == lc.CREATED + lc.DELETED
        assert {d["id"] for d in engine.list_software_deployments()} == deployments_before
        assert set(_configs(engine)) == configs_before


def test_actions_run_twice_make_one_deployment(sqlite_engine, stack_name):
    """Every action may run again after a crash (nestedflow.resources.base):
    a config's and a deployment's create run twice with one idempotency key
    store one config, one derived config and one deployment."""
    from nestedflow.db.software_config import SoftwareConfigStore
    from nestedflow.resources import base
    from nestedflow.resources.software_config import SoftwareConfig
    from nestedflow.resources.software_deployment import SoftwareDeployment

    store = SoftwareConfigStore(sqlite_engine.db)

    def context(resource_id, key):
        return base.ActionContext(stack_id="s", stack_name=stack_name,
                                  resource_id=resource_id, resource_name=f"r{resource_id}",
                                  type_name="t", traversal_id="tr", create_key=key,
                                  store=None, software_configs=store)

    config_props = {"group": "script", "config": "x", "inputs": None, "outputs": None,
                    "options": None}
    first = SoftwareConfig("c", config_props, context(1, "k1")).create()
    assert SoftwareConfig("c", config_props, context(1, "k1")).create() == first
    props = {"config": first, "server": "srv", "input_values": {"a": 1}, "name": None,
             "actions": ["CREATE", "UPDATE"], "signal_transport": "NO_SIGNAL"}
    made = [SoftwareDeployment("d", props, context(2, "k2")).create() for _ in range(2)]
    assert made[0] == made[1]
    assert [d["id"] for d in sqlite_engine.list_software_deployments()] == [made[0]]
    assert len(sqlite_engine.list_software_configs()) == 2  # the config, one derived


def _signal_when_waiting(engine, *signals, count=None):
    """Play the server's agent: signal each deployment of a new derived
    config once it waits, with the next of ``signals`` (the last repeats),
    ``count`` times (default: one per signal)."""
    done = []
    count = len(signals) if count is None else count

    def agent():
        while len(done) < count:
            for deployment in engine.list_software_deployments():
                key = (deployment["id"], deployment["config_id"])
                if deployment["status"] == "IN_PROGRESS" and key not in done:
                    details = signals[min(len(done), len(signals) - 1)]
                    engine.signal_software_deployment(deployment["id"], details)
                    done.append(key)
            threading.Event().wait(0.1)

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    return thread


def test_software_deployment_heat_signal(sqlite_engine, stack_name):
    """HEAT_SIGNAL: IN_PROGRESS ("Deploy data available") until the signal;
    its deploy_stdout, deploy_stderr, deploy_status_code and outputs become
    the attributes (signal_software_deployment, get_attribute); a non-zero
    status code fails it with Heat's reason (_check_complete:
    "Deployment to server failed: deploy_status_code : Deployment exited
    with non-zero status code: 2") and the stack rolls back, deploying the
    previous input values again (convergence's rollback is an update)."""
    engine = sqlite_engine
    props = {"signal_transport": "HEAT_SIGNAL", "input_values": {"foo": "one"}}
    agent = _signal_when_waiting(engine, {"deploy_stdout": "out", "deploy_stderr": "",
                                          "deploy_status_code": 0, "result": "42"})
    stack = engine.wait(engine.create_stack(stack_name, _deployment_template(props)).id, 60)
    agent.join(10)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"stdout": "out", "result": "42"}
    deployment, derived = _deployment(engine, stack.id)
    assert (deployment["status"], deployment["status_reason"]) == ("COMPLETE",
                                                                   "Outputs received")
    inputs = {i["name"]: i["value"] for i in derived["inputs"]}
    assert inputs["deploy_signal_transport"] == "HEAT_SIGNAL"
    assert {"deploy_auth_url", "deploy_username", "deploy_password",
            "deploy_project_id"} <= set(inputs)

    failing = dict(props, input_values={"foo": "two"})
    # The rollback deploys the old values again: the agent signals success.
    agent = _signal_when_waiting(engine, {"deploy_status_code": 2}, {"deploy_status_code": 0})
    stack = engine.wait(engine.update_stack(stack.id, _deployment_template(failing)).id, 60)
    agent.join(10)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    failed = [e for e in engine.list_events(stack.id)
              if e.resource_name == "r" and e.status == "FAILED"]
    _, derived = _deployment(engine, stack.id)
    assert {i["name"]: i["value"] for i in derived["inputs"]}["foo"] == "one"
    assert failed[0].status_reason.endswith(
        "Deployment to server failed: deploy_status_code : Deployment exited with non-zero "
        "status code: 2")
    engine.wait(engine.delete_stack(stack.id).id, 60)


def test_structured_deployment(sqlite_engine, stack_name):
    """structured_config.py StructuredDeployment (test_structured_config.py
    test_build_derived_config, test_parse): {get_input: x} in the config is
    replaced by the input's value; STRICT fails on an input without one."""
    engine = sqlite_engine
    config = {"config": {"greeting": {"get_input": "foo"}, "server": {
        "get_input": "deploy_server_id"}, "keep": ["x", {"get_input": "missing"}]},
        "inputs": [{"name": "foo"}]}
    props = {"signal_transport": "NO_SIGNAL", "input_values": {"foo": "hello"}}
    template = _deployment_template(props, config, "OS::Heat::StructuredDeployment")
    template["resources"]["config"]["type"] = "OS::Heat::StructuredConfig"
    stack = engine.wait(engine.create_stack(stack_name, template).id, 60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    _, derived = _deployment(engine, stack.id)
    assert derived["config"] == {"greeting": "hello",
                                 "server": lc.physical_id(engine, stack.id, "server"),
                                 "keep": ["x", None]}
    strict = dict(props, input_values_validate="STRICT")
    template["resources"]["r"]["properties"] = dict(
        template["resources"]["r"]["properties"], **strict)
    stack = engine.wait(engine.update_stack(stack.id, template).id, 60)
    assert stack.stack_status == "ROLLBACK_COMPLETE"
    assert "The Parameter (missing) was not provided." in " ".join(
        e.status_reason for e in engine.list_events(stack.id))


@pytest.mark.parametrize("group_type", ["OS::Heat::SoftwareDeploymentGroup",
                                        "OS::Heat::StructuredDeploymentGroup"])
def test_deployment_groups(sqlite_engine, stack_name, group_type):
    """SoftwareDeploymentGroup (software_deployment.py) and
    StructuredDeploymentGroup: one deployment per servers entry, named by it;
    deploy_stdouts/deploy_status_codes and any output as name -> value maps
    (get_attribute, _member_attribute_name); servers updates in place (a
    member added), signal_transport replaces the group."""
    engine = sqlite_engine
    config_type = ("OS::Heat::StructuredConfig" if "Structured" in group_type
                   else "OS::Heat::SoftwareConfig")

    def template(servers, transport="HEAT_SIGNAL"):
        return {"heat_template_version": "2018-08-31", "resources": {
            "s1": {"type": "OS::Heat::DeployedServer"},
            "s2": {"type": "OS::Heat::DeployedServer"},
            "config": {"type": config_type, "properties": {"outputs": [{"name": "result"}]}},
            "r": {"type": group_type, "properties": {
                "config": {"get_resource": "config"}, "signal_transport": transport,
                "servers": {name: {"get_resource": name} for name in servers}}}},
            "outputs": {"codes": {"value": {"get_attr": ["r", "deploy_status_codes"]}},
                        "stdouts": {"value": {"get_attr": ["r", "deploy_stdouts"]}},
                        "results": {"value": {"get_attr": ["r", "result"]}}}}

    agent = _signal_when_waiting(engine, {"deploy_stdout": "ok", "deploy_status_code": 0,
                                          "result": "r"}, count=2)
    stack = engine.wait(engine.create_stack(stack_name, template(["s1"])).id, 60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"codes": {"s1": 0}, "stdouts": {"s1": "ok"},
                             "results": {"s1": "r"}}
    group_id = lc.physical_id(engine, stack.id)
    stack = engine.wait(engine.update_stack(stack.id, template(["s1", "s2"])).id, 60)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert stack.outputs["codes"] == {"s1": 0, "s2": 0}
    assert lc.physical_id(engine, stack.id) == group_id
    agent.join(10)
    assert len(engine.list_software_deployments()) == 2

    stack = engine.wait(engine.update_stack(stack.id, template(["s1", "s2"], "NO_SIGNAL")).id,
                        60)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    assert lc.physical_id(engine, stack.id) != group_id
    assert lc.collapsed(lc.resource_events(engine, stack.id))[-4:] == lc.REPLACED
    assert stack.outputs["codes"] == {"s1": None, "s2": None}
    assert len(engine.list_software_deployments()) == 2

    stack = engine.wait(engine.delete_stack(stack.id).id, 60)
    assert stack.stack_status == "DELETE_COMPLETE"
    assert engine.list_software_deployments() == []

    rolled, events = lc.rollback(engine, f"{stack_name}-rb", {
        "type": group_type, "properties": {"servers": {"a": "srv"},
                                           "signal_transport": "NO_SIGNAL"}}, {})
    assert rolled.stack_status == "ROLLBACK_COMPLETE", rolled.status_reason
    assert lc.collapsed(events) == lc.CREATED + lc.DELETED
    assert engine.list_software_deployments() == []


def test_configs_and_deployments_belong_to_the_stacks_project(sqlite_engine, stack_name):
    """As Heat's resources call the config API with the stack's context
    (heat/db/api.py scopes configs and deployments to their tenant)."""
    from oslo_context import context as oslo_context

    def ctx(project):
        return oslo_context.RequestContext(project_id=project, user_id="u", overwrite=False)

    engine = sqlite_engine
    a = ctx("proj-a")
    props = {"signal_transport": "NO_SIGNAL"}
    stack = engine.create_stack(stack_name, _deployment_template(props), context=a)
    stack = engine.wait(stack.id, timeout=60, context=a)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    deployment_id = lc.physical_id(engine, stack.id)
    config_id = lc.physical_id(engine, stack.id, "config")
    assert engine.show_software_deployment(deployment_id, context=a)["id"] == deployment_id
    assert engine.show_software_config(config_id, context=a)["id"] == config_id
    with pytest.raises(exceptions.SoftwareDeploymentNotFound):
        engine.show_software_deployment(deployment_id, context=ctx("proj-b"))
    with pytest.raises(exceptions.SoftwareConfigNotFound):
        engine.show_software_config(config_id, context=ctx("proj-b"))


def test_deployment_signalled_through_signal_resource(sqlite_engine, stack_name):
    """The server's agent signalling through the resource (heat-api's
    resource signal; Engine.signal_resource): SoftwareDeployment.handle_signal
    calls signal_software_deployment and returns its reason, recorded as a
    SIGNAL event "Signal: deployment <id> succeeded" (Resource._handle_signal);
    the waiting create completes with the signal's values as attributes. A
    second signal finds it settled; a non-zero status code fails an update
    with Heat's reason."""
    engine = sqlite_engine
    props = {"signal_transport": "HEAT_SIGNAL"}
    stack = engine.create_stack(stack_name, _deployment_template(props))

    def waiting():
        rows = [r for r in engine.list_resources(stack.id) if r.name == "r"]
        return [d for d in engine.list_software_deployments()
                if d["status"] == "IN_PROGRESS"] if rows and rows[0].status == \
            "IN_PROGRESS" else []

    deployment = _until(waiting)[0]
    engine.signal_resource(stack.id, "r", {"deploy_stdout": "done", "deploy_status_code": 0,
                                           "result": "ok"})
    stack = engine.wait(stack.id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    assert stack.outputs == {"stdout": "done", "result": "ok"}
    assert f"Signal: deployment {deployment['id']} succeeded" in [
        e.status_reason for e in engine.list_events(stack.id) if e.resource_name == "r"]
    assert lc.physical_id(engine, stack.id) == deployment["id"]
    engine.signal_resource(stack.id, "r", {"deploy_status_code": 1})  # settled: no change
    assert engine.show_software_deployment(deployment["id"])["status"] == "COMPLETE"
    with pytest.raises(exceptions.ResourceFailure, match="a map of its outputs"):
        engine.signal_resource(stack.id, "r", "not a map")

    update = engine.update_stack(stack.id, _deployment_template(
        dict(props, input_values={"foo": "two"})))
    _until(lambda: engine.show_software_deployment(deployment["id"])["status"]
           == "IN_PROGRESS")
    engine.signal_resource(stack.id, "r", {"deploy_status_code": 3})
    _until(lambda: engine.show_software_deployment(deployment["id"])["action"] == "UPDATE"
           and engine.show_software_deployment(deployment["id"])["status"] == "IN_PROGRESS"
           and engine.get_stack(stack.id).action == "ROLLBACK")
    # The rollback deploys the previous values again and waits for the agent.
    engine.signal_resource(stack.id, "r", {"deploy_status_code": 0})
    stack = engine.wait(update.id, timeout=60)
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    assert ("Deployment to server failed: deploy_status_code : Deployment exited with "
            "non-zero status code: 3") in " ".join(
        e.status_reason for e in engine.list_events(stack.id) if e.resource_name == "r")


def _until(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")
