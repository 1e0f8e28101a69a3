"""Check types come only from stevedore entry points (group ``nestedflow.checks``)."""

import threading

from stevedore import extension

from nestedflow import exceptions

NAMESPACE = "nestedflow.checks"

_lock = threading.Lock()
_types = None


def check_types():
    """``{type name: Check subclass}``, scanned once per process."""
    global _types
    with _lock:
        if _types is None:
            manager = extension.ExtensionManager(NAMESPACE, invoke_on_load=False)
            _types = {ext.name: ext.plugin for ext in manager}
        return _types


def get(type_name, path):
    types = check_types()
    if type_name not in types:
        raise exceptions.StackValidationFailed(
            f"unknown check type {type_name!r}; available: {sorted(types)}", path=path)
    return types[type_name]
