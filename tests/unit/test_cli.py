"""The command line against a fake engine: parsing, rendering, exit codes.

The fake stands in for ``nestedflow.engine.service.Engine`` (injected by
replacing ``shell.make_engine``); end-to-end runs against the real engine live
elsewhere.
"""

import datetime
import io
import json

import pytest
from rich.console import Console

from nestedflow import exceptions
from nestedflow.cmd import progress, shell
from nestedflow.cmd.commands import templates, waiting

# -- fakes -------------------------------------------------------------------


class FakeStack:
    def __init__(self, id="s-1", name="web", action="CREATE", status="COMPLETE",
                 status_reason="Stack CREATE completed successfully", outputs=None,
                 parent_id=None):
        self.id = id
        self.name = name
        self.action = action
        self.status = status
        self.status_reason = status_reason
        self.outputs = outputs if outputs is not None else {}
        self.parent_id = parent_id
        self.created_at = datetime.datetime(2024, 5, 1, 12, 0, 0, 123456)
        self.updated_at = None
        self.disable_rollback = False

    def to_dict(self):
        return {
            "id": self.id, "name": self.name, "action": self.action,
            "status": self.status, "status_reason": self.status_reason,
            "outputs": self.outputs, "parent_id": self.parent_id,
            "created_at": self.created_at.isoformat(), "updated_at": None,
            "disable_rollback": self.disable_rollback,
        }


class FakeResource:
    def __init__(self, name, action="CREATE", status="COMPLETE", type="OS::Heat::None",
                 physical_id="p-1", status_reason="state changed"):
        self.name = name
        self.type = type
        self.physical_id = physical_id
        self.action = action
        self.status = status
        self.status_reason = status_reason
        self.properties = {}

    def to_dict(self):
        return {"name": self.name, "type": self.type, "physical_id": self.physical_id,
                "action": self.action, "status": self.status,
                "status_reason": self.status_reason, "properties": self.properties}


class FakeEvent:
    def __init__(self, id, resource_name, action, status, reason):
        self.id = id
        self.timestamp = datetime.datetime(2024, 5, 1, 12, 0, id)
        self.resource_name = resource_name
        self.action = action
        self.status = status
        self.status_reason = reason
        self.physical_id = None

    def to_dict(self):
        return {"id": self.id, "timestamp": self.timestamp.isoformat(),
                "resource_name": self.resource_name, "action": self.action,
                "status": self.status, "status_reason": self.status_reason,
                "physical_id": self.physical_id}


class FakeEngine:
    """Records calls; ``final`` is what ``wait`` / later ``get_stack`` answer."""

    def __init__(self, runs_in_process=False, final=None, stacks=None):
        self.runs_in_process = runs_in_process
        self.calls = []
        self.final = final
        self.stacks = {s.id: s for s in (stacks or [FakeStack()])}
        self.resources = [FakeResource("a"), FakeResource("b", physical_id="p-2")]
        self.events = [FakeEvent(1, "a", "CREATE", "COMPLETE", "state changed [ok]")]
        self.closed = False

    def _started(self, stack_id, action):
        base = self.stacks[stack_id]
        return FakeStack(id=base.id, name=base.name, action=action, status="IN_PROGRESS",
                         status_reason="")

    def get_stack(self, name_or_id):
        self.calls.append(("get_stack", name_or_id))
        for s in self.stacks.values():
            if name_or_id in (s.id, s.name):
                return s
        raise exceptions.StackNotFound(name_or_id)

    def get_template(self, stack_id):
        self.get_stack(stack_id)
        return {"outputs": {"url": {"description": "where it answers", "value": None}}}

    def create_stack(self, name, template, **kwargs):
        self.calls.append(("create_stack", name, template, kwargs))
        started = FakeStack(id="s-new", name=name, status="IN_PROGRESS", status_reason="")
        self.stacks[started.id] = started
        return started

    def update_stack(self, stack_id, template, **kwargs):
        self.calls.append(("update_stack", stack_id, template, kwargs))
        return self._started(stack_id, "UPDATE")

    def delete_stack(self, stack_id):
        self.calls.append(("delete_stack", stack_id))
        return self._started(stack_id, "DELETE")

    def suspend_stack(self, stack_id):
        self.calls.append(("suspend_stack", stack_id))
        return self._started(stack_id, "SUSPEND")

    def resume_stack(self, stack_id):
        self.calls.append(("resume_stack", stack_id))
        return self._started(stack_id, "RESUME")

    def check_stack(self, stack_id):
        self.calls.append(("check_stack", stack_id))
        return self._started(stack_id, "CHECK")

    def cancel_update(self, stack_id, rollback=True):
        self.calls.append(("cancel_update", stack_id, rollback))
        return self._started(stack_id, "ROLLBACK" if rollback else "UPDATE")

    def wait(self, stack_id, timeout=None):
        self.calls.append(("wait", stack_id))
        return self.final

    def list_stacks(self, show_nested=False, **tag_filters):
        self.calls.append(("list_stacks", show_nested, *tag_filters.items()))
        return list(self.stacks.values())

    def list_resources(self, stack_id, nested_depth=0):
        self.calls.append(("list_resources", stack_id))
        return self.resources

    def list_events(self, stack_id, nested_depth=0):
        self.calls.append(("list_events", stack_id))
        return self.events

    def close(self):
        self.closed = True


@pytest.fixture(autouse=True)
def _isolated(monkeypatch):
    for var in ("NESTEDFLOW_DB_URL", "NESTEDFLOW_JOBBOARD_URL", "NESTEDFLOW_TRANSPORT_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(shell, "DEFAULT_CONFIG_FILE", "/nonexistent/nestedflow.conf")


@pytest.fixture
def engine(monkeypatch):
    fake = FakeEngine()
    built = {}

    def factory(**kwargs):
        built.update(kwargs)
        return fake

    monkeypatch.setattr(shell, "make_engine", factory)
    # No light reader: ``stack list`` reads through the fake engine too.
    monkeypatch.setattr(shell, "make_reader", lambda db_url: None)
    fake.built = built
    return fake


@pytest.fixture
def template(tmp_path):
    path = tmp_path / "stack.yaml"
    path.write_text("heat_template_version: 2018-08-31\nresources: {}\n")
    return str(path)


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = shell.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# -- argument parsing --------------------------------------------------------------


def test_create_with_every_flag(engine, template, tmp_path):
    env = tmp_path / "env.yaml"
    env.write_text("parameters: {a: 0}\n")
    engine.final = FakeStack(id="s-new", name="web")
    code, out, err = run("--db-url", "sqlite://", "stack", "create", "web", "-t", template,
                         "-P", "a=1", "--parameter", "b=x=y", "-e", str(env),
                         "--disable-rollback", "--timeout", "5", "--wait", "-f", "json")
    assert code == 0, err
    name, tmpl, kwargs = engine.calls[0][1:]
    assert (name, tmpl) == ("web", {"heat_template_version": "2018-08-31", "resources": {}})
    assert kwargs == {"parameters": {"a": "1", "b": "x=y"}, "environment": {"parameters": {"a": 0}},
                      "disable_rollback": True, "timeout": 5}
    assert engine.built["db_url"] == "sqlite://"


def test_format_before_and_after_command(engine):
    for argv in (["stack", "list", "-f", "json"], ["-f", "json", "stack", "list"],
                 ["--format=json", "stack", "list"],
                 ["--db-url", "sqlite://", "-f", "json", "stack", "list"]):
        code, out, _ = run(*argv)
        assert code == 0 and json.loads(out)[0]["ID"] == "s-1"
    assert shell.move_global_format(["-f", "json", "stack", "show", "x"]) == [
        "stack", "show", "x", "-f", "json"]


@pytest.mark.parametrize("flags,expected", [
    ([], None), (["--rollback"], False), (["--no-rollback"], True),
    (["--rollback", "enabled"], False), (["--rollback", "disabled"], True),
    (["--rollback", "keep"], None),
])
def test_update_rollback_flags(engine, template, flags, expected):
    engine.final = FakeStack(action="UPDATE")
    assert run("stack", "update", "web", "-t", template, *flags)[0] == 0
    call = next(c for c in engine.calls if c[0] == "update_stack")
    assert call[3]["disable_rollback"] is expected


def test_cancel_rollback_flag(engine):
    engine.final = FakeStack(action="ROLLBACK")
    run("stack", "cancel", "web")
    engine.final = FakeStack(action="UPDATE", status="FAILED")
    run("stack", "cancel", "web", "--no-rollback")
    assert [c[2] for c in engine.calls if c[0] == "cancel_update"] == [True, False]


@pytest.mark.parametrize("argv", [
    [],
    ["stack", "create", "web"],                        # -t is required
    ["stack", "list", "-f", "xml"],
    ["stack", "create", "web", "-t", "t", "--timeout", "0"],
    ["stack", "create", "web", "-t", "t", "--timeout", "soon"],
    ["stack", "update", "web", "-t", "t", "--rollback", "--no-rollback"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert shell.main(argv) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["stack"], ["stack", "bogus"], ["db"]])
def test_unknown_command_exit_2(argv, capsys):
    assert shell.main(argv) == 2


def test_help_exits_0(capsys):
    assert shell.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("stack create", "stack resource list", "stack output show", "db sync"):
        assert name in out


def test_parse_parameters():
    assert templates.parse_parameters(["a=1", "b=x=y", "c=", " d =v"]) == {
        "a": "1", "b": "x=y", "c": "", "d": "v",
    }
    assert templates.parse_parameters(None) == {}


@pytest.mark.parametrize("bad", ["novalue", "=1", ""])
def test_parse_parameters_rejects(bad):
    with pytest.raises(shell.CommandError, match="expected KEY=VALUE"):
        templates.parse_parameters([bad])


def test_bad_parameter_is_error_line(engine, template):
    code, out, err = run("stack", "create", "web", "-t", template, "-P", "oops")
    assert code == 1
    assert err == "ERROR: invalid parameter 'oops': expected KEY=VALUE\n"
    assert out == ""
    assert not any(c[0] == "create_stack" for c in engine.calls)


# -- URL resolution -----------------------------------------------------------------


def test_urls_flag_beats_env(engine, monkeypatch):
    monkeypatch.setenv("NESTEDFLOW_DB_URL", "sqlite:///env.db")
    run("--db-url", "sqlite:///flag.db", "--jobboard-url", "zookeeper://h:2181/x",
        "stack", "list")
    assert engine.built["db_url"] == "sqlite:///flag.db"
    assert engine.built["jobboard_url"] == "zookeeper://h:2181/x"


def test_urls_env_then_config(engine, monkeypatch, tmp_path):
    conf = tmp_path / "nestedflow.conf"
    conf.write_text("[database]\nconnection = sqlite:///conf.db\n")
    run("--config-file", str(conf), "stack", "list")
    assert engine.built["db_url"] == "sqlite:///conf.db"
    assert engine.built["jobboard_url"] is None
    # The engine reads oslo.messaging's [DEFAULT] transport_url itself.
    assert engine.built["transport_url"] is None
    monkeypatch.setenv("NESTEDFLOW_TRANSPORT_URL", "rabbit://guest:guest@127.0.0.1:5672/")
    run("--config-file", str(conf), "stack", "list")
    assert engine.built["transport_url"] == "rabbit://guest:guest@127.0.0.1:5672/"

    monkeypatch.setenv("NESTEDFLOW_DB_URL", "sqlite:///env.db")
    run("--config-file", str(conf), "stack", "list")
    assert engine.built["db_url"] == "sqlite:///env.db"


def test_missing_config_file_is_error_line(engine, tmp_path):
    code, _, err = run("--config-file", str(tmp_path / "nope.conf"), "stack", "list")
    assert code == 1
    assert err.startswith("ERROR: ") and err.count("\n") == 1


def test_named_config_file_is_read_with_the_url_given(engine, monkeypatch, tmp_path):
    # Even when ``stack list`` needs no Engine (a light reader) and the
    # URL comes from the environment: a file named is read, mistakes and all.
    monkeypatch.setattr(shell, "make_reader", lambda db_url: engine)
    monkeypatch.setenv("NESTEDFLOW_DB_URL", "sqlite:///env.db")
    code, _, err = run("--config-file", str(tmp_path / "nope.conf"), "stack", "list")
    assert code == 1 and err.startswith("ERROR: ")
    assert run("stack", "list")[0] == 0
    assert "db_url" not in engine.built  # listed by the reader, no Engine built


# -- create / update / delete ---------------------------------------------------------


def test_create_closes_engine(engine, template):
    engine.final = FakeStack(id="s-new", name="web")
    assert run("stack", "create", "web", "-t", template)[0] == 0
    assert engine.closed


def test_create_without_wait_on_jobboard_returns_at_once(engine, template):
    code, out, err = run("stack", "create", "web", "-t", template, "-f", "json")
    assert code == 0
    assert json.loads(out)["stack_status"] == "CREATE_IN_PROGRESS"
    assert ("wait", "s-new") not in engine.calls
    assert err == ""


def test_create_in_process_waits_even_without_wait(engine, template):
    engine.runs_in_process = True
    engine.final = FakeStack(id="s-new", name="web")
    code, out, err = run("stack", "create", "web", "-t", template, "-f", "json")
    assert code == 0
    assert ("wait", "s-new") in engine.calls
    assert err == waiting.IN_PROCESS_NOTICE + "\n"
    assert json.loads(out)["stack_status"] == "CREATE_COMPLETE"


def test_create_rolled_back_exits_1_with_reason(engine, template):
    engine.final = FakeStack(id="s-new", name="web", action="ROLLBACK", status="COMPLETE",
                             status_reason="resources.a: boom")
    code, out, err = run("stack", "create", "web", "-t", template, "--wait")
    assert code == 1
    assert "ROLLBACK" in out
    assert err == "ERROR: Stack web ROLLBACK_COMPLETE: resources.a: boom\n"


def test_create_rollback_default_is_heatclients(engine, template):
    """heatclient/osc/v1/stack.py CreateStack: disable_rollback = not
    --enable-rollback, so a plain create is not rolled back."""
    engine.final = FakeStack(id="s-new", name="web")
    for flags, expected in (([], True), (["--enable-rollback"], False),
                            (["--disable-rollback"], True)):
        assert run("stack", "create", "web", "-t", template, *flags)[0] == 0
        call = [c for c in engine.calls if c[0] == "create_stack"][-1]
        assert call[3]["disable_rollback"] is expected


def test_create_missing_template(engine, tmp_path):
    code, out, err = run("stack", "create", "web", "-t", str(tmp_path / "missing.yaml"))
    assert code == 1
    assert err == f"ERROR: template file {tmp_path / 'missing.yaml'} not found\n"
    assert out == ""


def test_engine_file_not_found_is_error_line(engine, template, monkeypatch):
    def create_stack(*a, **kw):
        raise FileNotFoundError(2, "No such file or directory", "nested.yaml")

    monkeypatch.setattr(engine, "create_stack", create_stack)
    code, _, err = run("stack", "create", "web", "-t", template)
    assert (code, err) == (1, "ERROR: No such file or directory: nested.yaml\n")


def test_validation_error_is_one_line(engine, template, monkeypatch):
    def create_stack(*a, **kw):
        raise exceptions.StackValidationFailed("must be an integer",
                                               path="resources.web.properties.port")

    monkeypatch.setattr(engine, "create_stack", create_stack)
    code, out, err = run("stack", "create", "web", "-t", template)
    assert code == 1
    assert err == "ERROR: resources.web.properties.port: must be an integer\n"
    assert "Traceback" not in err


def test_update_resolves_name(engine, template):
    engine.final = FakeStack(action="UPDATE")
    code, _, _ = run("stack", "update", "web", "-t", template, "--existing", "--no-rollback",
                     "--wait")
    assert code == 0
    call = next(c for c in engine.calls if c[0] == "update_stack")
    assert call[1] == "s-1"
    assert call[3] == {"parameters": None, "existing": True, "disable_rollback": True}


def test_update_failed_exits_1(engine, template):
    engine.final = FakeStack(action="UPDATE", status="FAILED", status_reason="bad")
    code, _, err = run("stack", "update", "s-1", "-t", template, "--wait")
    assert code == 1
    assert err == "ERROR: Stack web UPDATE_FAILED: bad\n"


def test_delete_prints_deleted(engine):
    engine.runs_in_process = True
    engine.final = FakeStack(action="DELETE", status="COMPLETE")
    code, out, err = run("stack", "delete", "web")
    assert code == 0
    assert out == "Stack web deleted\n"
    assert ("delete_stack", "s-1") in engine.calls


def test_delete_several(engine):
    engine.stacks["s-2"] = FakeStack(id="s-2", name="db")
    engine.final = FakeStack(action="DELETE", status="COMPLETE")
    code, out, _ = run("stack", "delete", "web", "s-2", "--yes", "--wait")
    assert code == 0
    assert out == "Stack web deleted\nStack db deleted\n"
    assert [c[1] for c in engine.calls if c[0] == "delete_stack"] == ["s-1", "s-2"]


def test_delete_asks_on_a_terminal(engine, monkeypatch):
    class TTY(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", TTY("n\n"))
    code, out, _ = run("stack", "delete", "web")
    assert code == 0 and "[y/N]" in out and "not deleted" in out
    assert not any(c[0] == "delete_stack" for c in engine.calls)
    monkeypatch.setattr("sys.stdin", TTY("y\n"))
    engine.final = FakeStack(action="DELETE", status="COMPLETE")
    assert run("stack", "delete", "web")[0] == 0
    assert ("delete_stack", "s-1") in engine.calls


def test_delete_failed(engine):
    engine.final = FakeStack(action="DELETE", status="FAILED", status_reason="stuck")
    code, out, err = run("stack", "delete", "web", "--wait")
    assert code == 1
    assert "deleted" not in out
    assert err == "ERROR: Stack web DELETE_FAILED: stuck\n"


@pytest.mark.parametrize("command,method,action", [
    ("suspend", "suspend_stack", "SUSPEND"),
    ("resume", "resume_stack", "RESUME"),
    ("check", "check_stack", "CHECK"),
])
def test_simple_actions(engine, command, method, action):
    engine.final = FakeStack(action=action)
    code, _, _ = run("stack", command, "web", "--wait")
    assert code == 0
    assert (method, "s-1") in engine.calls
    engine.final = FakeStack(action=action, status="FAILED", status_reason="no")
    assert run("stack", command, "web", "--wait")[0] == 1


def test_actions_on_several_stacks(engine):
    """heatclient/osc/v1/stack.py _stacks_action: one or more stacks, each
    acted on in turn, listed afterwards with stack list's columns."""
    engine.stacks["s-2"] = FakeStack(id="s-2", name="db")
    engine.final = FakeStack(action="SUSPEND")
    code, out, err = run("stack", "suspend", "web", "db", "--wait", "-f", "json")
    assert code == 0, err
    assert [c for c in engine.calls if c[0] == "suspend_stack"] == [
        ("suspend_stack", "s-1"), ("suspend_stack", "s-2")]
    rows = json.loads(out)
    assert list(rows[0]) == ["ID", "Stack Name", "Stack Status", "Creation Time",
                             "Updated Time"]
    assert [r["Stack Status"] for r in rows] == ["SUSPEND_COMPLETE"] * 2
    # A failure does not stop the others; it is reported and the exit status is 1.
    engine.final = FakeStack(action="CHECK", status="FAILED", status_reason="no")
    code, out, err = run("stack", "check", "web", "db", "--wait", "-f", "value",
                         "-c", "stack_status")
    assert code == 1
    assert out == "CHECK_FAILED\nCHECK_FAILED\n"
    assert err.count("ERROR: Stack web CHECK_FAILED: no") == 2


def test_cancel(engine):
    engine.final = FakeStack(action="ROLLBACK")
    assert run("stack", "cancel", "web", "--wait")[0] == 0
    assert ("cancel_update", "s-1", True) in engine.calls
    engine.final = FakeStack(action="UPDATE", status="FAILED", status_reason="cancelled")
    assert run("stack", "cancel", "web", "--no-rollback", "--wait")[0] == 0
    assert ("cancel_update", "s-1", False) in engine.calls


def test_unknown_stack(engine):
    code, out, err = run("stack", "show", "nope")
    assert (code, out, err) == (1, "", "ERROR: Stack nope not found\n")


def test_keyboard_interrupt_exits_130(engine, monkeypatch):
    def boom(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "list_stacks", boom)
    code, _, err = run("stack", "list")
    assert code == 130
    assert "Interrupted" in err
    assert engine.closed


def test_unexpected_error_names_its_type(engine, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(engine, "list_stacks", boom)
    code, out, err = run("stack", "list")
    assert (code, out, err) == (1, "", "ERROR: RuntimeError: bug\n")


def test_debug_shows_traceback(engine):
    code, _, err = run("--debug", "stack", "show", "nope")
    assert code == 1
    assert err.startswith("ERROR: Stack nope not found\nTraceback")
    assert "StackNotFound" in err


# -- read commands and rendering ----------------------------------------------------------


def test_list_json(engine):
    code, out, _ = run("stack", "list", "--show-nested", "-f", "json")
    assert code == 0
    data = json.loads(out)
    assert isinstance(data, list) and data[0]["ID"] == "s-1"
    # heatclient adds the parent column with --nested (osc/v1/stack.py _list).
    assert list(data[0]) == ["ID", "Stack Name", "Stack Status", "Creation Time",
                             "Updated Time", "Parent"]
    assert ("list_stacks", True) in engine.calls
    assert "\x1b" not in out


def test_list_table(engine):
    code, out, _ = run("stack", "list")
    assert code == 0
    # heatclient's columns (osc/v1/stack.py _list).
    for text in ("| ID ", "| Stack Name ", "| Stack Status ", "| Creation Time ",
                 "| Updated Time ", "s-1", "web", "CREATE_COMPLETE", "2024-05-01 12:00:00"):
        assert text in out
    assert "123456" not in out and "None" not in out


def test_show_table_with_outputs(engine):
    engine.stacks["s-1"].outputs = {"url": "http://x", "ports": [80, 443]}
    code, out, _ = run("stack", "show", "web")
    assert code == 0
    assert "stack_status_reason" in out and "Stack CREATE completed successfully" in out
    # heatclient's layout: one "name: value" line per output, YAML for structures.
    assert "| outputs             | ports:" in out
    assert "|                     |   - 80" in out
    assert "| url: http://x" in out.replace("|                     ", "")


def test_show_json(engine):
    code, out, _ = run("-f", "json", "stack", "show", "s-1")
    stack = engine.stacks["s-1"]
    data = json.loads(out)
    # heatclient's fields first, in its order (osc/v1/stack.py _show_stack).
    assert list(data)[:8] == ["id", "stack_name", "description", "creation_time",
                              "updated_time", "stack_status", "stack_status_reason",
                              "parameters"]
    assert data["id"] == stack.id and data["stack_name"] == stack.name
    assert data["stack_status"] == "CREATE_COMPLETE"
    assert data["stack_status_reason"] == stack.status_reason
    assert data["outputs"] == stack.outputs


def test_resources_table_and_json(engine):
    code, out, _ = run("stack", "resources", "web")
    assert code == 0
    for text in ("physical_resource_id", "resource_type", "OS::Heat::None", "p-2"):
        assert text in out
    assert "stack_name" in run("stack", "resources", "web", "--long")[1]
    assert ("list_resources", "s-1") in engine.calls
    data = json.loads(run("stack", "resources", "web", "-f", "json")[1])
    assert [r["resource_name"] for r in data] == ["a", "b"]
    # heatclient's columns (osc/v1/resource.py ResourceList).
    assert list(data[0]) == ["resource_name", "physical_resource_id", "resource_type",
                             "resource_status", "updated_time"]


def test_events_table_keeps_brackets(engine):
    code, out, _ = run("stack", "events", "web")
    assert code == 0
    # "[ok]" would vanish if the reason were parsed as rich markup.
    assert "state changed [ok]" in out
    assert json.loads(run("stack", "events", "web", "-f", "json")[1])[0]["resource_name"] == "a"


def test_outputs(engine):
    engine.stacks["s-1"].outputs = {"b": None, "a": {"k": "v"}}
    code, out, _ = run("stack", "outputs", "web")
    assert code == 0 and "| a     | k: v  |" in out
    assert json.loads(run("stack", "outputs", "web", "-f", "json")[1]) == {
        "b": None, "a": {"k": "v"}}


# -- db sync -------------------------------------------------------------------------------


def test_db_sync(monkeypatch):
    import sys
    import types

    from nestedflow.db import migration

    calls = []
    fake = types.ModuleType("nestedflow.db.migration")
    fake.db_sync = calls.append
    fake.default_url = migration.default_url
    fake.revisions = lambda url: {"0008"}
    monkeypatch.setitem(sys.modules, "nestedflow.db.migration", fake)
    import nestedflow.db

    monkeypatch.setattr(nestedflow.db, "migration", fake, raising=False)
    code, out, _ = run("--db-url", "postgresql://u:secret@127.0.0.1/test", "db", "sync")
    assert code == 0
    assert calls == ["postgresql://u:secret@127.0.0.1/test"]
    assert out == ("database at postgresql://u:***@127.0.0.1/test is up to date "
                   "(revision 0008)\n")

    code, out, _ = run("db", "sync")
    assert calls[-1] is None
    assert out.startswith("database at sqlite:///") and "nestedflow.sqlite" in out


# -- progress -------------------------------------------------------------------------------


class PollingEngine(FakeEngine):
    """get_stack answers IN_PROGRESS ``polls`` times, then the final stack."""

    def __init__(self, polls, final):
        super().__init__(final=final)
        self.polls = polls
        self.resources = [
            FakeResource("a", action="CREATE", status="COMPLETE"),
            FakeResource("b", action="CREATE", status="IN_PROGRESS"),
            FakeResource("c", action="INIT", status="COMPLETE"),
        ]

    def get_stack(self, name_or_id):
        self.calls.append(("get_stack", name_or_id))
        if self.polls > 0:
            self.polls -= 1
            return FakeStack(status="IN_PROGRESS", status_reason="")
        return self.final


def test_count_settled_uses_current_action():
    resources = PollingEngine(0, None).resources + [
        FakeResource("d", action="CREATE", status="FAILED")]
    assert progress.count_settled(resources, "CREATE") == (2, 4, ["b"])


def test_in_progress_line_truncates():
    names = [f"r{i}" for i in range(10)]
    line = progress.in_progress_line(names)
    assert line.startswith("in progress: r0, r1") and line.endswith("(+2 more)")
    assert progress.in_progress_line([]) == ""


def test_poll_until_settled():
    eng = PollingEngine(3, FakeStack())
    seen = []
    final = progress.poll(eng, "s-1", on_update=lambda s, r: seen.append(s.status),
                          sleep=lambda _: None)
    assert final is eng.final
    assert seen == ["IN_PROGRESS"] * 3 + ["COMPLETE"]


def test_poll_delete_vanished():
    class Vanishing(PollingEngine):
        def get_stack(self, name_or_id):
            if self.polls > 0:
                self.polls -= 1
                return FakeStack(action="DELETE", status="IN_PROGRESS")
            raise exceptions.StackNotFound(name_or_id)

    assert progress.poll(Vanishing(1, None), "s-1", sleep=lambda _: None) is None
    with pytest.raises(exceptions.StackNotFound):
        progress.poll(Vanishing(0, None), "s-1", sleep=lambda _: None)


def test_wait_with_progress_renders_bar():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    eng = PollingEngine(2, FakeStack())
    final = progress.wait_with_progress(eng, "s-1", console=console, sleep=lambda _: None)
    assert final is eng.final
    text = buf.getvalue()
    assert "stack web" in text and "CREATE_COMPLETE" in text


def test_wait_flag_uses_progress_on_tty(monkeypatch, template):
    eng = PollingEngine(2, FakeStack(id="s-1", action="UPDATE"))
    eng.final.action = "UPDATE"
    monkeypatch.setattr(shell, "make_engine", lambda **kw: eng)
    monkeypatch.setattr(progress, "POLL_INTERVAL", 0)

    class TTY(io.StringIO):
        def isatty(self):
            return True

    out, err = io.StringIO(), TTY()
    code = shell.main(["stack", "update", "web", "-t", template, "--wait"], stdout=out, stderr=err)
    assert code == 0
    assert "UPDATE_COMPLETE" in err.getvalue()    # the live display, on stderr
    assert "UPDATE" in out.getvalue() and "\x1b" not in out.getvalue()
    assert not any(c[0] == "wait" for c in eng.calls)


# -- cliff formatters and widths -------------------------------------------------------


def test_formats_and_columns(engine):
    import yaml

    code, out, _ = run("stack", "list", "-f", "yaml")
    assert code == 0 and yaml.safe_load(out)[0]["Stack Name"] == "web"
    # heatclient's names and nestedflow's earlier ones both answer -c.
    assert run("stack", "list", "-f", "value", "-c", "Stack Name", "-c", "Stack Status")[1] \
        == "web CREATE_COMPLETE\n"
    assert run("stack", "list", "-f", "value", "-c", "name", "-c", "status")[1] == \
        "web COMPLETE\n"
    out = run("stack", "list", "-f", "csv", "-c", "id", "-c", "created_at")[1]
    # cliff matches -c case-insensitively: "id" selects heatclient's "ID".
    # Heat's API time format, as heatclient's CSV carries it.
    assert out.splitlines() == ['"ID","created_at"', '"s-1","2024-05-01T12:00:00Z"']
    assert run("stack", "show", "web", "-f", "value", "-c", "stack_status")[1] == \
        "CREATE_COMPLETE\n"
    assert run("stack", "show", "web", "-f", "shell", "-c", "status")[1] == 'status="COMPLETE"\n'


def test_max_width_80_keeps_names_whole(engine):
    long_name = "frontend_load_balancer_pool_x"  # 29 characters
    engine.resources = [FakeResource(long_name, physical_id="9adc8be0-601d-4e11-b258-97f6a47d34a9",
                                     type="OS::Heat::TestResource",
                                     status_reason="a long reason " * 6)]
    def floor(headings, kept=()):
        # A column is never narrower than its heading: heatclient's column
        # names set how narrow a table can get.
        return sum(max(len(h), len(k)) for h, k in zip(headings, kept or headings,
                                                          strict=True)) \
            + 3 * len(headings) + 1

    code, out, _ = run("stack", "resource", "list", "web", "--max-width", "80")
    assert code == 0
    headings = ("resource_name", "physical_resource_id", "resource_type",
                "resource_status", "updated_time")
    narrowest = floor(headings, (long_name,) + headings[1:])
    assert max(len(line) for line in out.splitlines()) == max(80, narrowest)
    assert f"| {long_name} |" in out and "…" not in out
    # The reason and id columns are wrapped, not the table widened by them.
    assert "9adc8be0-601d-4e11-b258-97f6a47d34a9" not in out


def test_show_one_output_and_resource(engine):
    engine.stacks["s-1"].outputs = {"url": "http://x", "ports": [80, 443]}
    assert run("stack", "output", "show", "web", "url", "-f", "value",
               "-c", "output_value")[1] == "http://x\n"
    assert json.loads(run("stack", "output", "show", "web", "--all", "-f", "json")[1]) == {
        "url": "http://x", "ports": [80, 443]}
    assert run("stack", "output", "show", "web", "nope")[2] == \
        "ERROR: Output nope not found in stack web\n"
    data = json.loads(run("stack", "resource", "show", "web", "b", "-f", "json")[1])
    assert (data["physical_resource_id"], data["stack_name"]) == ("p-2", "web")
    data = json.loads(run("stack", "resource", "show", "web", "b", "-f", "json",
                          "-c", "physical_id", "-c", "type")[1])
    assert data == {"physical_id": "p-2", "type": "OS::Heat::None"}
    assert run("stack", "resource", "show", "web", "zz")[2] == \
        "ERROR: Resource zz not found in stack web\n"
    data = json.loads(run("stack", "event", "show", "web", "a", "1", "-f", "json")[1])
    assert data["status_reason"] == "state changed [ok]"


def test_update_existing_without_template(engine):
    engine.final = FakeStack(action="UPDATE")
    code, _, err = run("stack", "update", "web", "--existing", "-P", "a=2")
    assert code == 0, err
    call = next(c for c in engine.calls if c[0] == "update_stack")
    assert call[2] is None and call[3]["parameters"] == {"a": "2"}
    code, _, err = run("stack", "update", "web")
    assert (code, err) == (1, "ERROR: a template (-t) is required unless --existing is "
                              "given\n")


def test_parameter_file_and_semicolons(engine, template, tmp_path):
    key = tmp_path / "key.pub"
    key.write_text("ssh-rsa AAA\n")
    engine.final = FakeStack(id="s-new")
    code, _, err = run("stack", "create", "web", "-t", template, "-P", "a=1;b=2",
                       "--parameter-file", f"key={key}")
    assert code == 0, err
    assert engine.calls[0][3]["parameters"] == {"a": "1", "b": "2", "key": "ssh-rsa AAA\n"}


def test_list_filter_sort_marker_limit(engine):
    for i, (name, status) in enumerate([("b", "FAILED"), ("a", "COMPLETE"), ("c", "COMPLETE")]):
        engine.stacks[f"s-{i + 2}"] = FakeStack(id=f"s-{i + 2}", name=name, status=status)

    def names(*argv):
        code, out, err = run("stack", "list", "-f", "value", "-c", "name", *argv)
        assert code == 0, err
        return out.split()

    assert names("--sort", "name") == ["a", "b", "c", "web"]
    assert names("--sort", "status:desc,name") == ["b", "a", "c", "web"]
    assert names("--filter", "status=COMPLETE", "--sort", "name:desc") == ["web", "c", "a"]
    assert names("--property", "name=a", "--property", "name=c") == ["a", "c"]
    assert names("--sort", "name", "--marker", "s-2", "--limit", "1") == ["c"]
    assert run("stack", "list", "--filter", "colour=red")[2] == \
        "ERROR: cannot filter on 'colour': no such field\n"
    assert run("stack", "list", "--marker", "nope")[2] == "ERROR: marker nope not found\n"


def test_tags_passed_to_the_engine(engine, template):
    run("stack", "list", "--tags", "a,b")
    run("stack", "list", "--tags", "a", "--tag-mode", "not-any")
    assert ("list_stacks", False, ("tags", ["a", "b"])) in engine.calls
    assert ("list_stacks", False, ("not_tags_any", ["a"])) in engine.calls
    engine.final = FakeStack(id="s-new")
    run("stack", "create", "x", "-t", template, "--tags", "prod, web")
    call = next(c for c in engine.calls if c[0] == "create_stack")
    assert call[3]["tags"] == ["prod", "web"]
    engine.final = FakeStack(action="UPDATE")
    run("stack", "update", "web", "--existing", "--timeout", "7")
    call = next(c for c in engine.calls if c[0] == "update_stack")
    assert call[3]["timeout"] == 7 and "tags" not in call[3]


def test_logging_options_use_oslo_log(engine, tmp_path, capsys):
    log_file = tmp_path / "cli.log"
    code, _, err = run("--log-file", str(log_file), "stack", "list")
    assert code == 0 and err == ""
    text = log_file.read_text()
    assert " INFO nestedflow.cmd.shell [-] engine on " in text  # oslo.log's format
    code, _, err = run("-v", "stack", "list")
    # oslo.log's handler writes to the process's stderr.
    assert code == 0 and "engine on" in err + capsys.readouterr().err
    code, _, err = run("stack", "list")
    assert code == 0 and err == ""                              # quiet by default
