"""What every function family shares: paths, errors, text conversion, path selection."""

import json
from collections.abc import Mapping

from nestedflow.exceptions import StackValidationFailed


class _Omit:
    """Type of :data:`OMIT`; it never leaves resolution (its container drops it)."""

    def __repr__(self):
        return "OMIT"


#: What a nullable ``if`` (2021-04-16) yields when its condition is false and
#: it has no false value: the enclosing map entry or list item disappears.
OMIT = _Omit()


class Function:
    """One implementation of an intrinsic function.

    ``impl(args, ctx, path)`` gets resolved arguments, or the raw ones when
    ``lazy`` (it then resolves what it needs itself). ``choose(args, ctx,
    path)``, for ``if``, returns the branch the condition picks without
    resolving it, or UNRESOLVED.
    """

    __slots__ = ("impl", "lazy", "choose")

    def __init__(self, impl, lazy=False, choose=None):
        self.impl = impl
        self.lazy = lazy
        self.choose = choose

    def __call__(self, args, ctx, path):
        return self.impl(args, ctx, path)

    def __repr__(self):
        return f"<Function {self.impl.__name__}>"


def join_path(path, key):
    return f"{path}.{key}" if path else str(key)


def index_path(path, i):
    return f"{path}[{i}]"


def fail(message, path):
    return StackValidationFailed(message, path=path)


def to_json(value):
    # Heat serialises maps and lists with sort_keys (oslo jsonutils.dumps).
    return json.dumps(value, sort_keys=True)


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


def is_sequence(value):
    return isinstance(value, (list, tuple))
