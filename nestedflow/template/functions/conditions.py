"""Conditions: the ``conditions`` section and the functions equals, not, and,
or, if.

Semantics follow heat/engine/conditions.py (a condition is defined by a
boolean or a function; names resolve lazily, once, with circular definitions
refused) and heat/engine/hot/functions.py (Equals, Not, And, Or, If,
IfNullable). A condition name inside not / and / or / if names another
condition; a boolean stands for itself.
"""

from collections.abc import Mapping

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.schema import UNRESOLVED
from nestedflow.template.functions.base import OMIT, Function, fail, is_sequence, join_path

_IN_PROGRESS = object()


class Conditions:
    """The ``conditions`` section of one template, evaluated on demand.

    ``fields`` are the ResolveContext fields (parameters, version, files...)
    condition functions read: the fields and not the context itself, which
    holds this object, so that a context and its conditions make no
    reference cycle -- one per resolve, and a traversal's thousands of them
    were left for the garbage collector's full collections to free.
    :meth:`is_enabled` answers True, False, or UNRESOLVED when a condition
    depends on parameters not known yet.
    """

    def __init__(self, definitions, fields):
        self._definitions = dict(definitions or {})
        self._resolved = {}
        self._fields = fields

    @property
    def _ctx(self):
        # Made per use, not kept: kept, it would make a cycle with this
        # object. A context is made for every resolve of a traversal, and
        # a condition is evaluated once per context at most.
        from nestedflow.template.functions import ResolveContext

        return ResolveContext(**self._fields, conditions=self, in_condition=True)

    def __contains__(self, name):
        return name in self._definitions

    def names(self):
        return list(self._definitions)

    def validate(self):
        """Check every definition without evaluating it: Heat parses the whole
        section (refusing functions not allowed there) but evaluates a
        condition only when something uses it."""
        from nestedflow.template.functions import check_functions

        for name, definition in self._definitions.items():
            path = f"conditions.{name}"
            if not isinstance(definition, (bool, Mapping)):
                raise StackValidationFailed(
                    f"the definition of condition {name!r} is invalid: {definition!r}",
                    path=path)
            check_functions(definition, self._ctx, path)

    def evaluate(self, snippet, path):
        """A condition given inline (a name, a boolean or a condition function)."""
        if snippet is None or isinstance(snippet, (bool, str)):
            return self.is_enabled(snippet, path)  # no function to resolve
        from nestedflow.template.functions import resolve

        value = resolve(snippet, self._ctx, path)
        return self.is_enabled(value, path)

    def is_enabled(self, name, path):
        if name is None:
            return True
        if isinstance(name, bool) or name is UNRESOLVED:
            return name
        if not isinstance(name, str) or name not in self._definitions:
            raise StackValidationFailed(f"invalid condition {name!r}", path=path)
        state = self._resolved.get(name)
        if state is _IN_PROGRESS:
            raise StackValidationFailed(f"circular definition for condition {name!r}",
                                        path=f"conditions.{name}")
        if state is None:
            self._resolved[name] = _IN_PROGRESS
            try:
                self._resolved[name] = self._resolve(name)
            except BaseException:
                del self._resolved[name]
                raise
        return self._resolved[name]

    def _resolve(self, name):
        from nestedflow.template.functions import resolve

        path = f"conditions.{name}"
        definition = self._definitions[name]
        if not isinstance(definition, (bool, Mapping)):
            raise StackValidationFailed(
                f"the definition of condition {name!r} is invalid: {definition!r}", path=path)
        value = resolve(definition, self._ctx, path)
        if value is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(value, bool):
            raise StackValidationFailed(
                f"the definition of condition {name!r} is invalid: {value!r} is not a boolean",
                path=path)
        return value


def _condition_value(arg, ctx, path):
    if isinstance(arg, bool) or arg is UNRESOLVED:
        return arg
    if ctx.conditions is None:
        raise fail(f"invalid condition {arg!r}: the template has no conditions", path)
    return ctx.conditions.is_enabled(arg, path)


def _combine(values):
    if any(value is UNRESOLVED for value in values):
        return UNRESOLVED
    return values


def _equals(args, ctx, path):
    if not args or not isinstance(args, list) or len(args) != 2:
        raise fail("arguments must be of the form [value_1, value_2]", path)
    return args[0] == args[1]


def _not(args, ctx, path):
    if args is None:
        raise fail("argument must be a condition", path)
    value = _condition_value(args, ctx, path)
    return UNRESOLVED if value is UNRESOLVED else not value


def _check_list(args, path):
    if not is_sequence(args):
        raise fail("arguments must be a list of conditions", path)
    if len(args) < 2:
        raise fail("the minimum number of condition arguments is 2", path)


def _and(args, ctx, path):
    _check_list(args, path)
    values = _combine([_condition_value(arg, ctx, path) for arg in args])
    return UNRESOLVED if values is UNRESOLVED else all(values)


def _or(args, ctx, path):
    _check_list(args, path)
    values = _combine([_condition_value(arg, ctx, path) for arg in args])
    return UNRESOLVED if values is UNRESOLVED else any(values)


def _make_if(nullable):
    def read_args(args, path):
        sizes = (2, 3) if nullable else (3,)
        if not args or not is_sequence(args) or isinstance(args, str) or len(args) not in sizes:
            form = "[condition_name, value_if_true, value_if_false]"
            raise fail(f"arguments must be of the form {form}", path)
        if len(args) == 2:
            return args[0], args[1], OMIT
        return args

    def choose(args, ctx, path):
        from nestedflow.template.functions import resolve

        condition, if_true, if_false = read_args(args, path)
        value = resolve(condition, ctx.for_condition(), join_path(path, "condition"))
        enabled = _condition_value(value, ctx, path)
        if enabled is UNRESOLVED:
            return UNRESOLVED
        return if_true if enabled else if_false

    def if_(args, ctx, path):
        from nestedflow.template.functions import resolve

        branch = choose(args, ctx, path)
        values = ctx.for_values()
        if branch is UNRESOLVED:
            # Still check both branches: their errors are template errors.
            _, if_true, if_false = read_args(args, path)
            for item in (if_true, if_false):
                if item is not OMIT:
                    resolve(item, values, path)
            return UNRESOLVED
        if branch is OMIT:
            return OMIT
        return resolve(branch, values, path)

    return Function(if_, lazy=True, choose=choose)


equals = Function(_equals)
not_ = Function(_not)
and_ = Function(_and)
or_ = Function(_or)
if_ = _make_if(nullable=False)
if_nullable = _make_if(nullable=True)
