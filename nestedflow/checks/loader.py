"""Check types come only from stevedore entry points (group
``nestedflow.checks``), through the one plugin loader
(:mod:`nestedflow.plugins.registry`): a check type whose module fails to
import is reported by name when a template asks for it."""

from nestedflow import exceptions
from nestedflow.plugins.registry import Registry

NAMESPACE = "nestedflow.checks"

REGISTRY = Registry(NAMESPACE)


def check_types():
    """``{type name: Check subclass}``, scanned once per process."""
    return REGISTRY.plugins()


def get(type_name, path):
    check_cls = REGISTRY.get(type_name)
    if check_cls is not None:
        return check_cls
    failure = REGISTRY.failure(type_name)
    if failure is not None:
        raise exceptions.StackValidationFailed(f"check type {type_name!r}: {failure}",
                                               path=path)
    raise exceptions.StackValidationFailed(
        f"unknown check type {type_name!r}; available: {REGISTRY.names()}", path=path)
