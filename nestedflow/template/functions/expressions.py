"""The ``yaql`` function: a yaql expression evaluated on ``data``.

As Heat's Yaql (heat/engine/hot/functions.py): the expression sees its
``data`` argument as ``$.data``; the parser is built with the ``[yaql]``
limits (``limit_iterators``, ``memory_quota``), so an expression that makes a
collection or a value larger than those fails instead of exhausting the
engine.
"""

import functools
import threading
from collections.abc import Mapping

from nestedflow.conf import CONF
from nestedflow.properties.schema import UNRESOLVED, contains_unresolved
from nestedflow.template.functions.base import Function, fail, join_path

_lock = threading.Lock()
_parsers = {}


def _parser():
    # yaql is imported on first use only: `import nestedflow` stays fast.
    # yaql's utils module reads collections.abc without importing it.
    import collections.abc  # noqa: F401

    import yaql

    limits = (CONF.yaql.limit_iterators, CONF.yaql.memory_quota)
    with _lock:
        if limits not in _parsers:
            options = {"yaql.limitIterators": limits[0], "yaql.memoryQuota": limits[1]}
            _parsers[limits] = (yaql.YaqlFactory().create(options), yaql.create_context())
        return _parsers[limits]


@functools.lru_cache(maxsize=512)
def _parsed_expression(expression, limits):
    # A parsed expression is immutable and evaluated in a fresh child context
    # each time: templates that repeat one expression (groups, generated
    # templates) parse it once. ``limits`` keys the cache to the parser.
    parser, _ = _parser()
    return parser(expression)


def parse(expression, path):
    """The compiled ``expression`` and the context to evaluate it in; a bad
    expression is refused with ``path``."""
    from yaql.language import exceptions

    if not isinstance(expression, str):
        raise fail(f"the expression argument must be a string, got {expression!r}", path)
    _, context = _parser()
    try:
        limits = (CONF.yaql.limit_iterators, CONF.yaql.memory_quota)
        statement = _parsed_expression(expression, limits)
    except exceptions.YaqlException as error:
        raise fail(f"bad expression: {error}", join_path(path, "expression")) from None
    return statement, context


def _check_args(args, path):
    if not isinstance(args, Mapping):
        raise fail("arguments must be a map with expression and data", path)
    if "expression" not in args or set(args) - {"expression", "data"}:
        raise fail("syntax is {expression: $.data.var1.sum(), data: {var1: [3, 2, 1]}}", path)


def _yaql(args, ctx, path):
    from nestedflow.template.functions import resolve

    _check_args(args, path)
    expression = resolve(args["expression"], ctx, join_path(path, "expression"))
    data = resolve(args.get("data", {}), ctx, join_path(path, "data"))
    if expression is UNRESOLVED:
        return UNRESOLVED
    # The expression is checked even while the data is unknown (validation).
    statement, context = parse(expression, path)
    if contains_unresolved(data):
        return UNRESOLVED
    from yaql.language import exceptions

    try:
        return statement.evaluate({"data": data}, context.create_child_context())
    except exceptions.YaqlException as error:
        raise fail(f"evaluating {expression!r}: {error}", path) from None
    except (TypeError, ValueError, LookupError, ArithmeticError) as error:
        raise fail(f"evaluating {expression!r}: {error}", path) from None


yaql = Function(_yaql, lazy=True)
