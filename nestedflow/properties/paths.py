"""Paths into values and templates: how errors name a place
(``resources.a.properties[0]``) and how a ``get_attr`` path selects into a
value. Shared by template functions, property schemas and the checks that
read attributes."""

from collections.abc import Mapping


def join_path(path, key):
    return f"{path}.{key}" if path else str(key)


def index_path(path, i):
    return f"{path}[{i}]"


def step(value, key):
    """Select one key / index; LookupError if absent, TypeError if not selectable."""
    if isinstance(value, Mapping):
        return value[key]
    if isinstance(value, (list, tuple)):
        if isinstance(key, str) and key.lstrip("-").isdigit():
            key = int(key)
        if not isinstance(key, int) or isinstance(key, bool):
            raise TypeError(f"list index must be an integer, got {key!r}")
        return value[key]
    raise TypeError(f"cannot select {key!r} from {type(value).__name__}")


def select_path(value, path_list, missing=None):
    """Follow ``path_list`` (map keys / list indexes) into ``value``.

    Returns ``missing`` when a key or index is absent or the value cannot be
    indexed, which is how Heat treats get_attr paths.
    """
    for key in path_list:
        try:
            value = step(value, key)
        except (LookupError, TypeError):
            return missing
    return value
