"""The argument shapes Heat checks when it *parses* a function, before any value
is known (the constructors and ``validate`` methods in
heat/engine/hot/functions.py and heat/engine/cfn/functions.py).

:func:`nestedflow.template.functions.check_functions` applies them where
nestedflow, like Heat, checks a snippet without resolving it (outputs,
conditions). A nested call counts as an opaque value, as Heat's Function
objects do: ``list_join: {get_param: x}`` is refused because the arguments
are not a list.
"""

from collections.abc import Mapping

from nestedflow.template.functions import conditions as cond
from nestedflow.template.functions import core, data, expressions, strings
from nestedflow.template.functions.base import fail


def _is_call(value, table):
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in table


def _list(args, table, size=None, minimum=None):
    if not isinstance(args, list) or _is_call(args, table):
        return False
    if size is not None and len(args) not in size:
        return False
    return minimum is None or len(args) >= minimum


def _check(ok, message, path):
    if not ok:
        raise fail(message, path)


def _get_attr(args, table, path):
    _check(_list(args, table, minimum=2), "arguments must be [resource, attribute, ...]", path)


def _get_attr_all(args, table, path):
    _check(_list(args, table, minimum=1), "arguments must be [resource] or "
           "[resource, attribute, ...]", path)


def _replace(args, table, path):
    _check(isinstance(args, Mapping) and not _is_call(args, table)
           and {"params", "template"} <= set(args),
           "syntax is {template: 'text var1', params: {var1: value}}", path)
    params = args["params"]
    _check(isinstance(params, Mapping), "params must be a map", path)


def _join(args, table, path):
    _check(_list(args, table, size=(2,)), "expects [delimiter, list]", path)


def _join_multiple(args, table, path):
    _check(_list(args, table, minimum=2), "expects [delimiter, list, ...]", path)


def _repeat(args, table, path):
    _check(isinstance(args, Mapping) and not _is_call(args, table)
           and {"for_each", "template"} <= set(args),
           "syntax is {template: 'This is %var%', for_each: {'%var%': [...]}}", path)
    for_each = args["for_each"]
    _check(isinstance(for_each, Mapping), "the for_each argument must contain a map", path)
    _check(isinstance(args.get("permutations", True), bool),
           "permutations should be a boolean", path)


def _str_split(args, table, path):
    _check(not isinstance(args, (str, Mapping)) or _is_call(args, table),
           'expects [",", "apples,pears", <index>]', path)


def _yaql(args, table, path):
    _check(isinstance(args, Mapping) and not _is_call(args, table), "arguments must be a map",
           path)
    _check("expression" in args and not set(args) - {"expression", "data"},
           "syntax is {expression: $.data.var1.sum(), data: {var1: [3, 2, 1]}}", path)
    if isinstance(args["expression"], str):
        expressions.parse(args["expression"], path)  # Heat's Yaql.validate


def _pair(args, table, path):
    _check(_list(args, table, size=(2,)), "arguments must be a list of two items", path)


def _if(sizes):
    def check(args, table, path):
        _check(_list(args, table, size=sizes),
               "arguments must be [condition_name, value_if_true, value_if_false]", path)
    return check


def _conditions(args, table, path):
    _check(_list(args, table, minimum=2), "the minimum number of condition arguments is 2",
           path)


def _make_url(args, table, path):
    _check(isinstance(args, Mapping) and not _is_call(args, table), "arguments must be a map",
           path)
    strings.check_url_keys(args, path)


def _resource_facade(args, table, path):
    core.check_facade_key(args, path)


CHECKS = {
    core.get_attr: _get_attr,
    core.get_attr_all: _get_attr_all,
    core.resource_facade: _resource_facade,
    strings.str_replace: _replace,
    strings.str_replace_json: _replace,
    strings.str_replace_strict: _replace,
    strings.str_replace_vstrict: _replace,
    strings.list_join: _join,
    strings.fn_join: _join,
    strings.list_join_multiple: _join_multiple,
    strings.str_split: _str_split,
    strings.make_url: _make_url,
    data.repeat: _repeat,
    data.repeat_with_map: _repeat,
    data.repeat_nested: _repeat,
    data.filter_values: _pair,
    data.contains: _pair,
    data.fn_select: _pair,
    expressions.yaql: _yaql,
    cond.equals: _pair,
    cond.if_: _if((3,)),
    cond.if_nullable: _if((2, 3)),
    cond.and_: _conditions,
    cond.or_: _conditions,
}


def check(handler, args, table, path):
    """Raise StackValidationFailed when ``args`` cannot be ``handler``'s arguments."""
    checker = CHECKS.get(handler)
    if checker is not None:
        checker(args, table, path)
