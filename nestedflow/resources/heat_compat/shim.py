"""The import shim: a plugin file written for Heat imports ``heat.*``
(``from heat.engine import resource``, ``from heat.common.i18n import _``...)
and gets this adapter, so the file runs unedited.

:func:`install` puts a finder at the end of ``sys.meta_path`` only when the
real ``heat`` package is not importable (nestedflow never imports Heat; a
process that has Heat installed keeps it). The finder serves the modules
of :data:`MODULES`, each a view of an adapter module (attributes are read
through to it), plus the packages above them; importing any other module
of those packages fails with ``No module named 'heat....': nestedflow's
Heat adapter does not provide it``, and the plugin file is skipped.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types

_ADAPTER = "nestedflow.resources.heat_compat"

#: Heat module -> adapter module serving it.
MODULES = {
    "heat.common.exception": f"{_ADAPTER}.exception",
    "heat.common.i18n": f"{_ADAPTER}.i18n",
    "heat.common.password_gen": f"{_ADAPTER}.password_gen",
    "heat.engine.attributes": f"{_ADAPTER}.attributes",
    "heat.engine.clients.client_plugin": f"{_ADAPTER}.clients",
    "heat.engine.constraints": f"{_ADAPTER}.constraints",
    "heat.engine.hot.parameters": f"{_ADAPTER}.hot_parameters",
    "heat.engine.properties": f"{_ADAPTER}.properties",
    "heat.engine.resource": f"{_ADAPTER}.resource",
    "heat.engine.resources.openstack.heat.none_resource": f"{_ADAPTER}.none_resource",
    "heat.engine.status": f"{_ADAPTER}.status",
    "heat.engine.support": f"{_ADAPTER}.support",
    "heat.engine.translation": f"{_ADAPTER}.translation",
}

#: The packages above them (``heat``, ``heat.engine``, ...): empty.
PACKAGES = frozenset(
    ".".join(name.split(".")[:depth])
    for name in MODULES for depth in range(1, name.count(".") + 1))

_lock = threading.Lock()


class _Missing(importlib.abc.Loader):
    """A ``heat.*`` module the adapter does not serve: the import fails
    saying so. The error carries no ``name``: ``from heat.engine import x``
    would otherwise swallow it for Python's vaguer "cannot import name"."""

    def create_module(self, spec):
        raise ModuleNotFoundError(
            f"No module named {spec.name!r}: nestedflow's Heat adapter does not provide it "
            "(doc/source/plugins.rst lists the Heat plugin API it does)")

    def exec_module(self, module):
        raise AssertionError("unreachable: create_module refused the module")


class _View(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if self.target is None:
            module.__path__ = []
            return
        adapter = importlib.import_module(self.target)
        module.__doc__ = adapter.__doc__
        module.__dict__.update(
            {name: value for name, value in vars(adapter).items()
             if not name.startswith("__")})
        # Module-level names added to the adapter later read through too.
        module.__getattr__ = lambda name: getattr(adapter, name)


class HeatShimFinder(importlib.abc.MetaPathFinder):
    """Serves :data:`MODULES` and :data:`PACKAGES` under Heat's names."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MODULES:
            return importlib.machinery.ModuleSpec(fullname, _View(MODULES[fullname]))
        if fullname in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _View(None), is_package=True)
        if fullname.startswith("heat.") and fullname.rpartition(".")[0] in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _Missing())
        return None


def installed():
    return any(isinstance(finder, HeatShimFinder) for finder in sys.meta_path)


def install():
    """Install the finder unless the real Heat is importable; True when
    ``heat.*`` imports resolve to this adapter."""
    with _lock:
        if installed():
            return True
        if "heat" in sys.modules or importlib.util.find_spec("heat") is not None:
            return False
        sys.meta_path.append(HeatShimFinder())
        return True


def ensure_package(name, path):
    """The package ``name`` (e.g. ``heat.engine.plugins``, where Heat loads
    plugin_dirs modules) with ``__path__`` ``path``."""
    package = sys.modules.get(name)
    if package is None:
        package = types.ModuleType(name)
        sys.modules[name] = package
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(importlib.import_module(parent), child, package)
    package.__path__ = list(path)
    return package
