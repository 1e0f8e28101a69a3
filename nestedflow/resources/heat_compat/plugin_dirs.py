"""Heat's plugin directories: the modules in ``[heat_compat] plugin_dirs``
whose ``available_resource_mapping()`` (or, lacking it,
``resource_mapping()``) names resource types, loaded as Heat's
``PluginManager`` loads them (``heat.engine.plugins.<module>``, packages
walked recursively, ``tests`` packages and ``setup`` modules skipped).

A module that fails to import or map is logged and skipped, as in Heat; a
mapped class that is not a Heat-style resource (it imported a real Heat)
is refused with a warning.
"""

import importlib.util
import logging
import os
import pkgutil
import sys

from nestedflow.resources.heat_compat import shim

LOG = logging.getLogger(__name__)

PACKAGE = "heat.engine.plugins"
_MAPPINGS = ("available_resource_mapping", "resource_mapping")


def load_types(plugin_dirs):
    """``{type name: class}`` from the modules in ``plugin_dirs`` (later
    modules win on a clash, as in Heat's registry)."""
    dirs = [path for path in plugin_dirs or () if os.path.isdir(path)]
    if not dirs:
        return {}
    if not shim.install():
        LOG.warning("plugin_dirs %s not loaded: a real Heat is importable in this process, "
                    "and its plugins cannot run on nestedflow", dirs)
        return {}
    from nestedflow.resources.heat_compat.resource import HeatStyleResource

    package = shim.ensure_package(PACKAGE, dirs)
    types = {}
    for finder, module_name, _is_package in pkgutil.walk_packages(dirs, PACKAGE + "."):
        if ".tests." in module_name or module_name.endswith(".setup"):
            continue
        module = _import(finder, module_name, package)
        for type_name, plugin in _mapping(module).items():
            if isinstance(plugin, type) and issubclass(plugin, HeatStyleResource):
                types[type_name] = plugin
            else:
                LOG.warning("plugin_dirs: %s from %s is not a Heat resource class on "
                            "nestedflow's adapter; ignored", type_name, module_name)
    return types


def _import(finder, module_name, package):
    spec = finder.find_spec(module_name)
    if spec is None:
        return None
    loaded = sys.modules.get(module_name)
    if loaded is not None and getattr(loaded, "__file__", None) == spec.origin:
        return loaded
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        sys.modules.pop(module_name, None)
        LOG.warning("plugin_dirs: %s failed to load, its types are not available: %s",
                    spec.origin, error)
        return None
    parent_name, _, child = module_name.rpartition(".")
    setattr(sys.modules.get(parent_name, package), child, module)
    return module


def _mapping(module):
    if module is None:
        return {}
    for name in _MAPPINGS:
        function = getattr(module, name, None)
        if not callable(function):
            continue
        try:
            mapping = function()
        except Exception as error:
            LOG.warning("plugin_dirs: %s() of %s failed: %s", name, module.__name__, error)
            return {}
        if isinstance(mapping, dict):
            return mapping
        if mapping is not None:
            LOG.warning("plugin_dirs: %s() of %s returned %r, not a mapping", name,
                        module.__name__, type(mapping).__name__)
    return {}
