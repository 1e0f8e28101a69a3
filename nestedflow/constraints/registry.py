"""Custom constraints come only from stevedore entry points
(group ``nestedflow.constraints``), loaded once, lazily."""

import threading

from oslo_log import log as logging
from stevedore import extension

NAMESPACE = "nestedflow.constraints"
LOG = logging.getLogger(__name__)

_lock = threading.Lock()
_plugins = None
_broken = {}


def _failed(manager, entrypoint, error):
    _broken[entrypoint.name] = f"{entrypoint.value} failed to load: {error}"


def _load():
    global _plugins
    with _lock:
        if _plugins is None:
            manager = extension.ExtensionManager(
                NAMESPACE, invoke_on_load=True, on_load_failure_callback=_failed)
            _plugins = {ext.name: ext.obj for ext in manager}
        return _plugins


def get(name):
    """The plugin instance for ``name``, or None if none is installed."""
    return _load().get(name)


def broken(name):
    """Why the plugin ``name`` could not be loaded, or None."""
    _load()
    return _broken.get(name)


def names():
    return sorted(_load())
