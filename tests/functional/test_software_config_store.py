"""The software-config store through the Engine API, on every database.

Follows Heat's heat/engine/service_software_config.py and its tests
(heat/tests/engine/service/test_software_config.py: ``test_create_software_config``,
``test_list_software_configs``, ``test_delete_software_config``,
``test_create_software_deployment``, ``test_update_software_deployment_fields``,
``test_signal_software_deployment``, ``test_metadata_software_deployments``)
and the dicts of heat/engine/api.py ``format_software_config`` /
``format_software_deployment``.
"""

import re

import pytest
from oslo_context import context as oslo_context

from nestedflow import exceptions

pytestmark = pytest.mark.functional

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def ctx(project, admin=False):
    return oslo_context.RequestContext(project_id=project, user_id="u", is_admin=admin,
                                       overwrite=False)


def _config(engine, name="cfg", context=None, outputs=None):
    return engine.create_software_config(
        group="script", name=name, config="#!/bin/sh\necho hi",
        inputs=[{"name": "foo"}, {"name": "n", "type": "Number", "default": "3",
                                  "replace_on_change": True}],
        outputs=outputs if outputs is not None else [{"name": "result"}],
        options={"opt": 1}, context=context)


def test_configs(engine):
    made = _config(engine)
    # Heat's stored form: type defaults to String, replace_on_change kept
    # only when true, defaults converted to the input's type; error_output
    # defaults to false (software_config_io.InputConfig/OutputConfig.as_dict).
    assert made["inputs"] == [{"name": "foo", "type": "String"},
                              {"name": "n", "type": "Number", "default": 3,
                               "replace_on_change": True}]
    assert made["outputs"] == [{"name": "result", "type": "String", "error_output": False}]
    assert set(made) == {"id", "name", "group", "creation_time", "config", "inputs",
                         "outputs", "options"}
    assert (made["name"], made["group"], made["options"]) == ("cfg", "script", {"opt": 1})
    assert made["config"] == "#!/bin/sh\necho hi"
    assert ISO.match(made["creation_time"])
    assert engine.show_software_config(made["id"]) == made

    second = _config(engine, name="second")
    listed = engine.list_software_configs()
    # detail=False: no config, inputs, outputs, options.
    assert [c["id"] for c in listed][-2:] == [made["id"], second["id"]]
    assert set(listed[-1]) == {"id", "name", "group", "creation_time"}
    page = engine.list_software_configs(limit=1, marker=made["id"])
    assert [c["id"] for c in page] == [second["id"]]

    engine.delete_software_config(second["id"])
    with pytest.raises(exceptions.SoftwareConfigNotFound,
                       match=f"Software config with id {second['id']} not found"):
        engine.show_software_config(second["id"])
    engine.delete_software_config(made["id"])  # the session's database is shared


def test_bad_inputs_are_refused_naming_where(engine):
    with pytest.raises(exceptions.StackValidationFailed, match=r"^inputs\[0\]\.name: "):
        engine.create_software_config("script", "x", "", [{"type": "String"}], [], {})
    with pytest.raises(exceptions.StackValidationFailed, match=r"^inputs\[0\]\.type: "):
        engine.create_software_config("script", "x", "", [{"name": "a", "type": "Nope"}],
                                      [], {})
    with pytest.raises(exceptions.StackValidationFailed, match="must be in a list"):
        engine.create_software_config("script", "x", "", [], {"name": "a"}, {})
    with pytest.raises(exceptions.StackValidationFailed, match=r"^inputs\[0\]\.default: "):
        engine.create_software_config("script", "x", "",
                                      [{"name": "a", "type": "Number", "default": "x"}], [], {})


def test_deployments_signal_and_metadata(engine):
    config = _config(engine, outputs=[{"name": "result"},
                                      {"name": "err", "error_output": True}])
    made = engine.create_software_deployment(
        server_id="srv-1", config_id=config["id"], input_values={"foo": "bar"},
        action="CREATE", status="IN_PROGRESS", status_reason="Deploy data available",
        stack_user_project_id=None)
    assert set(made) == {"id", "server_id", "input_values", "output_values", "action",
                         "status", "status_reason", "config_id", "creation_time"}
    assert (made["server_id"], made["config_id"], made["status"]) == (
        "srv-1", config["id"], "IN_PROGRESS")
    assert made["output_values"] is None
    assert engine.show_software_deployment(made["id"]) == made
    assert [d["id"] for d in engine.list_software_deployments(server_id="srv-1")] == [made["id"]]
    assert engine.list_software_deployments(server_id="srv-2") == []
    assert engine.metadata_software_deployments("srv-1") == [
        engine.show_software_config(config["id"])]

    # A referenced config cannot go (Heat's InvalidRestrictedAction).
    with pytest.raises(exceptions.ActionNotAllowed, match="it is referenced"):
        engine.delete_software_config(config["id"])

    # Heat's signal_software_deployment: outputs and deploy_* recorded.
    reason = engine.signal_software_deployment(
        made["id"], {"result": "ok", "deploy_stdout": "out", "deploy_status_code": 0})
    assert reason == f"deployment {made['id']} succeeded"
    shown = engine.show_software_deployment(made["id"])
    assert (shown["status"], shown["status_reason"]) == ("COMPLETE", "Outputs received")
    assert shown["output_values"] == {"result": "ok", "deploy_stdout": "out",
                                      "deploy_stderr": None, "deploy_status_code": 0}
    assert ISO.match(shown["updated_time"])
    # Settled: a late signal changes nothing.
    assert engine.signal_software_deployment(made["id"], {"deploy_status_code": 1}) is None

    failing = engine.create_software_deployment("srv-1", config["id"], {}, "CREATE",
                                                "IN_PROGRESS", "", None)
    reason = engine.signal_software_deployment(
        failing["id"], {"deploy_status_code": 2, "err": "boom"})
    assert reason == f"deployment {failing['id']} failed"
    shown = engine.show_software_deployment(failing["id"])
    assert shown["status"] == "FAILED"
    assert shown["status_reason"] == ("deploy_status_code : Deployment exited with non-zero "
                                      "status code: 2, err : boom")

    updated = engine.update_software_deployment(
        made["id"], config_id=None, input_values=None, output_values=None,
        action="UPDATE", status="IN_PROGRESS", status_reason="again",
        updated_at="2026-01-02T03:04:05Z")
    assert (updated["action"], updated["status"], updated["status_reason"]) == (
        "UPDATE", "IN_PROGRESS", "again")
    assert updated["updated_time"] == "2026-01-02T03:04:05Z"
    assert updated["input_values"] == {"foo": "bar"}  # not given: kept

    engine.delete_software_deployment(made["id"])
    engine.delete_software_deployment(failing["id"])
    with pytest.raises(exceptions.SoftwareDeploymentNotFound):
        engine.show_software_deployment(made["id"])
    engine.delete_software_config(config["id"])  # no longer referenced


def test_project_scoping(sqlite_engine):
    engine = sqlite_engine
    a, b, admin = ctx("p-a"), ctx("p-b"), ctx("ops", admin=True)
    config = _config(engine, context=a)
    assert engine.show_software_config(config["id"], context=a)["id"] == config["id"]
    with pytest.raises(exceptions.SoftwareConfigNotFound):
        engine.show_software_config(config["id"], context=b)
    with pytest.raises(exceptions.SoftwareConfigNotFound):
        engine.delete_software_config(config["id"], context=b)
    assert engine.list_software_configs(context=b) == []
    # An admin sees every project's, with the project (Heat's include_project).
    listed = {c["id"]: c for c in engine.list_software_configs(context=admin)}
    assert listed[config["id"]]["project"] == "p-a"
    # b cannot deploy a's config.
    with pytest.raises(exceptions.SoftwareConfigNotFound):
        engine.create_software_deployment("srv", config["id"], {}, "CREATE", "COMPLETE", "",
                                          None, context=b)
    # The stack user project sees the deployment too (heat/db/api.py).
    deployment = engine.create_software_deployment("srv", config["id"], {}, "CREATE",
                                                   "COMPLETE", "", "p-b", context=a)
    assert engine.show_software_deployment(deployment["id"], context=b)["id"] == \
        deployment["id"]
    assert [d["id"] for d in engine.list_software_deployments(context=b)] == [deployment["id"]]
    assert engine.list_software_deployments(context=ctx("p-c")) == []
    with pytest.raises(exceptions.SoftwareDeploymentNotFound):
        engine.show_software_deployment(deployment["id"], context=ctx("p-c"))
    with pytest.raises(exceptions.StackValidationFailed, match="stack_user_project_id"):
        engine.create_software_deployment("srv", config["id"], {}, "CREATE", "COMPLETE", "",
                                          "x" * 65, context=a)


def test_through_engine_client(pg_url, tmp_path):
    """The same methods over RPC (1.5), project-scoped by the message context."""
    from tests.functional.engine_services import EngineServices

    services = EngineServices(pg_url, tmp_path, count=1)
    try:
        client = services.client()
        a = ctx("rpc-swc-a")
        config = _config(client, context=a)
        assert client.show_software_config(config["id"], context=a) == config
        with pytest.raises(exceptions.SoftwareConfigNotFound):
            client.show_software_config(config["id"], context=ctx("rpc-swc-b"))
        deployment = client.create_software_deployment(
            "srv-rpc", config["id"], {"foo": 1}, "CREATE", "IN_PROGRESS", "", None,
            context=a)
        assert client.signal_software_deployment(
            deployment["id"], {"deploy_status_code": "0"}, context=a) == (
            f"deployment {deployment['id']} succeeded")
        assert client.show_software_deployment(deployment["id"], context=a)["status"] == \
            "COMPLETE"
        assert [c["id"] for c in client.metadata_software_deployments("srv-rpc", context=a)] \
            == [config["id"]]
        client.delete_software_deployment(deployment["id"], context=a)
        client.delete_software_config(config["id"], context=a)
        assert client.list_software_configs(context=a) == []
    finally:
        services.close()
