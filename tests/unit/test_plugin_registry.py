"""The one plugin loader (nestedflow.plugins.registry): every group --
resource types, check types, custom constraints, dispatchers -- loads
through it, and a plugin that fails to import is reported, not dropped."""

import importlib.metadata

import pytest
from stevedore import extension

from nestedflow import exceptions
from nestedflow.checks import loader as check_loader
from nestedflow.constraints import registry as constraint_registry
from nestedflow.plugins.registry import Registry

NAMESPACE = "nestedflow.test_plugins"


class Good:
    pass


@pytest.fixture
def entry_points(monkeypatch):
    """Give NAMESPACE the entry points a test lists (good and broken)."""
    points = []
    original = extension.ExtensionManager.list_entry_points

    def listed(self):
        if self.namespace == NAMESPACE:
            return list(points)
        return original(self)

    monkeypatch.setattr(extension.ExtensionManager, "list_entry_points", listed)

    def add(name, value):
        points.append(importlib.metadata.EntryPoint(name=name, value=value, group=NAMESPACE))

    return add


def test_get_loads_only_the_plugin_asked_for(entry_points):
    entry_points("good", f"{__name__}:Good")
    entry_points("broken", "nestedflow.no_such_module:Plugin")
    registry = Registry(NAMESPACE)
    assert registry.get("good") is Good
    assert registry.failure("good") is None
    # Not imported yet: only "good" was asked for.
    assert "broken" not in registry._failures
    assert registry.get("missing") is None and registry.failure("missing") is None


def test_a_load_failure_is_recorded_and_reported(entry_points, caplog):
    entry_points("good", f"{__name__}:Good")
    entry_points("broken", "nestedflow.no_such_module:Plugin")
    registry = Registry(NAMESPACE)
    assert registry.names() == ["good"]
    failure = registry.failures()["broken"]
    assert "nestedflow.no_such_module:Plugin failed to load" in str(failure)
    assert isinstance(failure.error, ImportError)
    assert registry.get("broken") is None and registry.failure("broken") is failure
    assert "broken" in caplog.text


def test_invoke_on_load_keeps_instances():
    registry = Registry.for_testing(NAMESPACE, {"good": Good}, invoke_on_load=True)
    assert isinstance(registry.get("good"), Good)
    assert registry.names() == ["good"]


def test_every_plugin_group_loads_through_it():
    assert isinstance(check_loader.REGISTRY, Registry)
    assert "tcp" in check_loader.check_types()
    assert isinstance(constraint_registry.REGISTRY, Registry)
    assert "ip_addr" in constraint_registry.names()
    from nestedflow.dispatch import base
    from nestedflow.dispatch.impl_local import LocalDispatcher
    from nestedflow.resources.registry import ResourceRegistry

    assert base.dispatcher_class(None) is LocalDispatcher
    assert "OS::Heat::None" in ResourceRegistry().names()


def test_a_broken_check_type_is_named(monkeypatch):
    from nestedflow.plugins import registry as registry_module

    failing = registry_module.LoadFailure("bad", "somewhere:Bad", ImportError("no module"))
    monkeypatch.setattr(check_loader.REGISTRY, "_failures", {"bad": failing})
    with pytest.raises(exceptions.StackValidationFailed, match="somewhere:Bad failed to load"):
        check_loader.get("bad", "resources.r.checks[0].type")
