"""What every function family shares: errors, text conversion; the path
helpers come from :mod:`nestedflow.properties.paths` (checks and resources
follow paths too, below this package)."""

import json

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.paths import index_path, join_path, select_path, step

__all__ = ["OMIT", "Function", "fail", "index_path", "is_sequence", "join_path",
           "select_path", "step", "to_json"]


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


def fail(message, path):
    return StackValidationFailed(message, path=path)


def to_json(value):
    # Heat serialises maps and lists with sort_keys (oslo jsonutils.dumps).
    return json.dumps(value, sort_keys=True)


def is_sequence(value):
    return isinstance(value, (list, tuple))
