"""One loader for every plugin group nestedflow has: resource types
(``nestedflow.resources``), checks (``nestedflow.checks``), custom
constraints (``nestedflow.constraints``) and dispatchers
(``nestedflow.dispatchers``).

Each group is a :class:`Registry` over stevedore's entry points, loaded
lazily and once per process: scanning entry points imports every plugin
module, which a command that never validates a template need not pay for.
``get(name)`` loads only the entry point asked for until the whole group is
wanted (``plugins()``, ``names()``), so the embedded engine choosing its
dispatcher does not import the ZooKeeper one and its client library.

A plugin that fails to import is not dropped silently: the failure is kept
(:meth:`Registry.failure`), logged once, and reported by whoever asks for
that name -- a template naming a check type whose module is broken is told
why, not that the type is unknown.

Low in the layers (it imports only stevedore and the exceptions) so that
``checks``, ``properties`` and ``dispatch`` can all use it.
"""

import dataclasses
import logging
import threading

from stevedore import extension, named

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class LoadFailure:
    """Why the entry point ``name`` of a group could not be loaded."""

    name: str
    #: The entry point's target (``module:attribute``).
    target: str
    error: BaseException

    def __str__(self):
        return f"{self.target} failed to load: {self.error}"


class Registry:
    """The plugins of one entry-point group, by entry-point name.

    ``invoke_on_load``: keep an instance of each plugin (made with no
    arguments) rather than the class. ``extensions``: a fixed list of
    stevedore extensions instead of the installed entry points (see
    :meth:`for_testing`).
    """

    def __init__(self, namespace, invoke_on_load=False, *, extensions=None):
        self.namespace = namespace
        self._invoke = invoke_on_load
        self._lock = threading.Lock()
        self._fixed = extensions
        self._plugins = {}
        self._failures = {}
        #: Names asked for that no entry point has (asked once each).
        self._missing = set()
        self._complete = False

    @classmethod
    def for_testing(cls, namespace, plugins, invoke_on_load=False):
        """A registry over ``{name: plugin}`` only (no entry points):
        stevedore's ``make_test_instance``, so tests need install nothing."""
        extensions = [extension.Extension(name, None, plugin,
                                          plugin() if invoke_on_load else None)
                      for name, plugin in plugins.items()]
        return cls(namespace, invoke_on_load, extensions=extensions)

    # -- loading ------------------------------------------------------------

    def _failed(self, manager, entry_point, error):
        failure = LoadFailure(entry_point.name, entry_point.value, error)
        if entry_point.name not in self._failures:
            LOG.warning("plugin %s of %s: %s", entry_point.name, self.namespace, failure)
        self._failures[entry_point.name] = failure

    def _keep(self, ext):
        self._plugins[ext.name] = ext.obj if self._invoke else ext.plugin

    def _load_all(self):
        with self._lock:
            if not self._complete:
                if self._fixed is not None:
                    manager = extension.ExtensionManager.make_test_instance(
                        self._fixed, namespace=self.namespace)
                else:
                    manager = extension.ExtensionManager(
                        self.namespace, invoke_on_load=self._invoke,
                        on_load_failure_callback=self._failed)
                for ext in manager:
                    self._keep(ext)
                self._complete = True

    def _load_one(self, name):
        with self._lock:
            if (self._complete or name in self._plugins or name in self._failures
                    or name in self._missing):
                return
            if self._fixed is not None:
                for ext in self._fixed:
                    if ext.name == name:
                        self._keep(ext)
                return
            manager = named.NamedExtensionManager(
                self.namespace, names=[name], invoke_on_load=self._invoke,
                on_load_failure_callback=self._failed,
                on_missing_entrypoints_callback=lambda names: None)
            for ext in manager:
                self._keep(ext)
            if name not in self._plugins and name not in self._failures:
                self._missing.add(name)

    # -- asking -------------------------------------------------------------

    def get(self, name, default=None):
        """The plugin ``name`` (class, or instance with ``invoke_on_load``),
        or ``default`` when none loaded (see :meth:`failure` for why)."""
        self._load_one(name)
        return self._plugins.get(name, default)

    def failure(self, name):
        """The :class:`LoadFailure` of ``name``, or None."""
        self._load_one(name)
        return self._failures.get(name)

    def failures(self):
        """``{name: LoadFailure}`` of the whole group."""
        self._load_all()
        return dict(self._failures)

    def plugins(self):
        """``{name: plugin}`` of every entry point that loaded."""
        self._load_all()
        return dict(self._plugins)

    def names(self):
        return sorted(self.plugins())
