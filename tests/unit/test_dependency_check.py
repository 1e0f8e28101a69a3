"""The import-time self-check of the private TaskFlow and SQLAlchemy names
nestedflow's adapter modules rely on."""

import subprocess
import sys

import pytest
from taskflow.engines.action_engine import selector

from nestedflow import dependency_check, exceptions
from nestedflow.db import sqlalchemy_compat
from nestedflow.taskflow import compat as taskflow_compat
from nestedflow.taskflow import jobboard as taskflow_jobboard


@pytest.mark.parametrize("names, supported, distribution", [
    (taskflow_compat.ENGINE_NAMES, taskflow_compat.SUPPORTED, "taskflow"),
    (taskflow_jobboard.JOBBOARD_NAMES, taskflow_compat.SUPPORTED, "taskflow"),
    (sqlalchemy_compat.NAMES, sqlalchemy_compat.SUPPORTED, "SQLAlchemy"),
    (sqlalchemy_compat.PSYCOPG2_NAMES, sqlalchemy_compat.SUPPORTED, "SQLAlchemy"),
])
def test_installed_versions_have_every_name(names, supported, distribution):
    dependency_check.check(names, supported, distribution)


def test_a_missing_method_is_named_with_the_supported_versions(monkeypatch):
    monkeypatch.delattr(selector.Selector, "_browse_atoms_for_execute")
    with pytest.raises(exceptions.UnsupportedDependency) as raised:
        dependency_check.check(taskflow_compat.ENGINE_NAMES, taskflow_compat.SUPPORTED,
                               "taskflow")
    message = str(raised.value)
    assert "taskflow.engines.action_engine.selector.Selector._browse_atoms_for_execute" in (
        message)
    assert "taskflow>=6.5,<7" in message
    assert message.startswith("taskflow 6.")  # the installed version


def test_a_missing_instance_attribute_is_found():
    # Set in __init__ only: found from the code that assigns it.
    dependency_check.check([("taskflow.storage", "Storage", "_lock")], "x", "taskflow")
    with pytest.raises(exceptions.UnsupportedDependency, match=r"Storage\._no_such_lock"):
        dependency_check.check([("taskflow.storage", "Storage", "_no_such_lock")], "x",
                               "taskflow")


def test_importing_an_adapter_fails_on_a_changed_dependency():
    # A fresh interpreter whose TaskFlow lost a hook before nestedflow loads.
    code = (
        "from taskflow.engines.action_engine import selector\n"
        "del selector.Selector._get_maybe_ready_for_execute\n"
        "import nestedflow.taskflow.parallel_engine\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("nestedflow.exceptions.UnsupportedDependency: taskflow ")
    assert "Selector._get_maybe_ready_for_execute" in last and "taskflow>=6.5,<7" in last
