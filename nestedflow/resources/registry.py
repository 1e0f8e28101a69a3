"""Resource types come from stevedore entry points (group
``nestedflow.resources``) and from Heat's plugin directories (``[heat_compat]
plugin_dirs``, modules written for Heat; see
:mod:`nestedflow.resources.heat_compat.plugin_dirs`). An entry point wins
over a plugin_dirs module that maps the same type name."""

import logging
import threading

from stevedore import extension

from nestedflow import exceptions
from nestedflow.resources.nested import TemplateResource
from nestedflow.template.template import is_template_file_type

NAMESPACE = "nestedflow.resources"
LOG = logging.getLogger(__name__)


class ResourceRegistry:
    """Maps a type name (the entry-point name) to its plugin class.

    Entry points are scanned once, lazily; a type that fails to import is
    reported when it is asked for, not when an unrelated type is loaded.
    """

    def __init__(self, manager=None):
        self._manager = manager
        self._lock = threading.Lock()
        self._types = None
        self._broken = {}

    @classmethod
    def for_testing(cls, types):
        """A registry over the given ``{name: class}`` only (no entry points)."""
        extensions = [
            extension.Extension(name, None, plugin, None) for name, plugin in types.items()
        ]
        return cls(extension.ExtensionManager.make_test_instance(extensions, namespace=NAMESPACE))

    def _load(self):
        with self._lock:
            if self._types is None:
                # Deferred: the adapter is only needed once types are loaded.
                from nestedflow.conf import CONF
                from nestedflow.resources.heat_compat import plugin_dirs, shim

                # An entry point may name a Heat plugin file too: its heat.*
                # imports need the shim before stevedore imports it.
                shim.install()
                manager = self._manager or extension.ExtensionManager(
                    NAMESPACE, invoke_on_load=False, on_load_failure_callback=self._failed
                )
                types = {ext.name: ext.plugin for ext in manager}
                from_dirs = plugin_dirs.load_types(CONF.heat_compat.plugin_dirs)
                for name in sorted(set(from_dirs) & (set(types) | set(self._broken))):
                    LOG.warning("resource type %s: the nestedflow.resources entry point "
                                "is used, not %s from plugin_dirs", name,
                                from_dirs[name].__module__)
                    del from_dirs[name]
                self._types = {**from_dirs, **types}
            return self._types

    def _failed(self, manager, entrypoint, error):
        self._broken[entrypoint.name] = f"{entrypoint.value} failed to load: {error}"

    def get(self, type_name):
        if is_template_file_type(type_name):
            # Template resources: the type is the file, resolved per stack.
            return TemplateResource
        types = self._load()
        if type_name in types:
            return types[type_name]
        if type_name in self._broken:
            raise exceptions.StackValidationFailed(
                f"resource type {type_name!r}: {self._broken[type_name]}"
            )
        raise exceptions.UnknownResourceType(type_name)

    def names(self):
        return sorted(self._load())
