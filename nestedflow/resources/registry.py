"""Resource types come from stevedore entry points (group
``nestedflow.resources``) and from Heat's plugin directories (``[heat_compat]
plugin_dirs``, modules written for Heat; see
:mod:`nestedflow.resources.heat_compat.plugin_dirs`). An entry point wins
over a plugin_dirs module that maps the same type name."""

import logging
import threading

from nestedflow import exceptions
from nestedflow.plugins.registry import Registry
from nestedflow.resources.nested import TemplateResource
from nestedflow.template.template import is_template_file_type

NAMESPACE = "nestedflow.resources"
LOG = logging.getLogger(__name__)


class ResourceRegistry:
    """Maps a type name (the entry-point name) to its plugin class.

    Entry points are scanned once, lazily (:class:`nestedflow.plugins.
    registry.Registry`); a type that fails to import is reported when it is
    asked for, not when an unrelated type is loaded.
    """

    def __init__(self, plugins=None):
        self._plugins = plugins or Registry(NAMESPACE)
        self._lock = threading.Lock()
        self._types = None

    @classmethod
    def for_testing(cls, types):
        """A registry over the given ``{name: class}`` only (no entry points)."""
        return cls(Registry.for_testing(NAMESPACE, types))

    def _load(self):
        with self._lock:
            if self._types is None:
                # Deferred: the adapter is only needed once types are loaded.
                from nestedflow.conf import CONF
                from nestedflow.resources.heat_compat import plugin_dirs, shim

                # An entry point may name a Heat plugin file too: its heat.*
                # imports need the shim before stevedore imports it.
                shim.install()
                types = self._plugins.plugins()
                broken = self._plugins.failures()
                from_dirs = plugin_dirs.load_types(CONF.heat_compat.plugin_dirs)
                for name in sorted(set(from_dirs) & (set(types) | set(broken))):
                    LOG.warning("resource type %s: the nestedflow.resources entry point "
                                "is used, not %s from plugin_dirs", name,
                                from_dirs[name].__module__)
                    del from_dirs[name]
                self._types = {**from_dirs, **types}
            return self._types

    def get(self, type_name):
        if is_template_file_type(type_name):
            # Template resources: the type is the file, resolved per stack.
            return TemplateResource
        types = self._load()
        if type_name in types:
            return types[type_name]
        failure = self._plugins.failures().get(type_name)
        if failure is not None:
            raise exceptions.StackValidationFailed(f"resource type {type_name!r}: {failure}")
        raise exceptions.UnknownResourceType(type_name)

    def names(self):
        return sorted(self._load())
