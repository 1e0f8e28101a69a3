"""Custom constraints come only from stevedore entry points
(group ``nestedflow.constraints``), loaded once, lazily, through the one
plugin loader (:mod:`nestedflow.plugins.registry`); each is kept as an
instance (a constraint plugin holds no state of a template)."""

from nestedflow.plugins.registry import Registry

NAMESPACE = "nestedflow.constraints"

REGISTRY = Registry(NAMESPACE, invoke_on_load=True)


def get(name):
    """The plugin instance for ``name``, or None if none is installed."""
    return REGISTRY.get(name)


def broken(name):
    """Why the plugin ``name`` could not be loaded, or None."""
    failure = REGISTRY.failure(name)
    return None if failure is None else str(failure)


def names():
    return REGISTRY.names()
