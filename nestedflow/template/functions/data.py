"""List and map functions: repeat, map_merge, map_replace, list_concat(_unique),
filter, contains, and the CFN Fn::Select / Fn::MemberListToMap.

Semantics follow heat/engine/hot/functions.py (Repeat, RepeatWithMap,
RepeatWithNestedLoop, MapMerge, MapReplace, ListConcat, ListConcatUnique,
Filter, Contains) and heat/engine/cfn/functions.py (Select, MemberListToMap).
"""

import itertools
import json
import math
from collections.abc import Mapping, Sequence

from nestedflow.properties.schema import UNRESOLVED, contains_unresolved
from nestedflow.template.functions import sizes
from nestedflow.template.functions.base import Function, fail, is_sequence, join_path, to_json


def _as_map(value, what, path):
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(f"{what} must be maps; {value!r:.200} is not", path)
    return value


def _map_merge(args, ctx, path):
    if not is_sequence(args):
        raise fail(f"expects a list of maps, got {args!r}", path)
    merged = {}
    for item in args:
        merged.update(_as_map(item, "items to merge", path))
    return sizes.items(merged, path)


def _map_replace(args, ctx, path):
    if not is_sequence(args) or len(args) != 2:
        raise fail('expects [{"key1": "val1"}, {"keys": {...}, "values": {...}}]', path)
    source = _as_map(args[0], "arguments", path)
    spec = _as_map(args[1], "arguments", path)
    unknown = sorted(str(key) for key in spec if key not in ("keys", "values"))
    if unknown:
        raise fail(f"the second map takes only keys and values, not {', '.join(unknown)}", path)
    key_map = _as_map(spec.get("keys", {}), "keys", path)
    value_map = _as_map(spec.get("values", {}), "values", path)
    result = {}
    for key, value in source.items():
        new_key = key_map.get(key)
        if new_key is None:
            new_key = key
        elif new_key in source and new_key != key:
            raise fail(f"key replacement {new_key!r} collides with a key in the input map", path)
        elif new_key in result:
            raise fail(f"key replacement {new_key!r} collides with a key in the output map",
                       path)
        try:
            value = value_map.get(value, value)
        except TypeError:
            pass  # unhashable values cannot be replacement targets
        result[new_key] = value
    return sizes.items(result, path)


def _concat(args, path):
    if not is_sequence(args):
        raise fail(f"expects a list of lists, got {args!r}", path)
    result = []
    for item in args:
        if item is None:
            continue
        if not is_sequence(item):
            raise fail(f"items to concat must be lists; {json.dumps(item):.200} is not", path)
        result.extend(item)
    # Before list_concat_unique compares every pair.
    return sizes.items(result, path)


def _list_concat(args, ctx, path):
    return _concat(args, path)


def _list_concat_unique(args, ctx, path):
    unique = []
    # Items may be unhashable (maps), so compare by equality, as Heat does.
    for item in _concat(args, path):
        if item not in unique:
            unique.append(item)
    return unique


def _filter(args, ctx, path):
    if not is_sequence(args):
        raise fail("argument must be a list", path)
    if len(args) != 2:
        raise fail(f"expected 2 arguments of the form [values, sequence], got {len(args)}",
                   path)
    values, sequence = args
    if not sequence:
        return sequence
    if not isinstance(sequence, list):
        raise fail(f"only works with lists, got {sequence!r}", path)
    if not values:
        return sequence
    if not isinstance(values, list):
        raise fail(f"filters a list of values, got {values!r}", path)
    return sizes.items([item for item in sequence if item not in values], path)


def _contains(args, ctx, path):
    if not args or not is_sequence(args) or len(args) != 2:
        raise fail('arguments must be of the form [value1, [value1, value2]]', path)
    value, sequence = args
    if not isinstance(sequence, Sequence):
        raise fail(f"second argument should be a sequence, got {sequence!r}", path)
    return value in sequence


def _fn_select(args, ctx, path):
    if not is_sequence(args) or len(args) != 2:
        raise fail("arguments must be of the form [index, collection]", path)
    index, collection = args
    if collection == "" or collection is None:
        return ""
    if isinstance(collection, str):
        try:
            collection = json.loads(collection)
        except ValueError as exc:
            raise fail(str(exc), path) from None
    if isinstance(collection, Mapping):
        if not isinstance(index, str):
            raise fail("index must be a string to select from a map", path)
        return collection.get(index, "")
    try:
        index = int(index)
    except (TypeError, ValueError):
        raise fail(f"index must be an integer, got {index!r}", path) from None
    if is_sequence(collection):
        try:
            return collection[index]
        except IndexError:
            return ""
    raise fail(f"cannot select from {collection!r}", path)


def _member_list_to_map(args, ctx, path):
    if not is_sequence(args) or len(args) != 3:
        raise fail("expects ['Name', 'Value', ['.member.0.Name=key', "
                   "'.member.0.Value=door']]", path)
    key_name, value_name, members = args
    if not isinstance(key_name, str) or not isinstance(value_name, str):
        raise fail("key and value names must be strings", path)
    if not is_sequence(members) or not all(isinstance(item, str) for item in members):
        raise fail("member list must be a list of strings", path)
    # Heat's aws_utils.extract_param_pairs: pair .member.N.<key_name> with
    # .member.N.<value_name>.
    partials = dict(item.split("=", 1) for item in members if "=" in item)
    result = {}
    for member, key in partials.items():
        suffix = f".{key_name}"
        if member.endswith(suffix):
            value_member = member[: -len(suffix)] + f".{value_name}"
            if value_member in partials:
                result[key] = partials[value_member]
    return sizes.items(result, path)


def _replace_in(template, replacements, budget):
    if isinstance(template, str):
        # A string that is exactly a placeholder takes the item itself, so
        # ``port: "%p%"`` over [80, 443] gives numbers. (Heat's str.replace
        # fails there on a non-string item; nestedflow is lenient.)
        if template in replacements:
            return replacements[template]
        original = template
        for key, value in replacements.items():
            if key not in template:
                continue  # and the item is not made text for nothing
            text = value if isinstance(value, str) else to_json(value) if isinstance(
                value, (Mapping, list)) else str(value)
            _check_growth(template, key, text, budget)
            template = template.replace(key, text)
        if template is not original:
            budget.spend(len(template))
        return template
    if isinstance(template, list):
        return [_replace_in(item, replacements, budget) for item in template]
    if isinstance(template, Mapping):
        return {_key_text(_replace_in(key, replacements, budget), budget):
                _replace_in(value, replacements, budget)
                for key, value in template.items()}
    return template


def _check_growth(template, key, text, budget):
    """Refuse a replacement whose result would not fit what ``budget`` has left."""
    grows = len(text) - len(key)
    if grows <= 0:
        return
    # Counting the placeholders is a scan of the text: done only when even
    # the most it could hold would not fit.
    most = len(template) // len(key) if key else len(template) + 1
    if not budget.fits(len(template) + most * grows):
        budget.check(len(template) + template.count(key) * grows)


def _key_text(value, budget):
    if isinstance(value, str):
        return value
    # A key that was a placeholder took an item, which may be a large map.
    text = str(value)
    budget.spend(len(text))
    return text


def _make_repeat(allow_maps, permutations_key):
    def repeat(args, ctx, path):
        from nestedflow.template.functions import resolve

        if not isinstance(args, Mapping):
            raise fail("arguments must be a map", path)
        if "for_each" not in args or "template" not in args:
            raise fail("syntax is {template: 'This is %var%', for_each: "
                       "{'%var%': ['a', 'b', 'c']}}", path)
        nested = args.get("permutations", True) if permutations_key else True
        if not isinstance(nested, bool):
            raise fail("permutations should be a boolean", path)
        for_each = resolve(args["for_each"], ctx, join_path(path, "for_each"))
        # Heat resolves the template first and substitutes into the result.
        template = resolve(args["template"], ctx, join_path(path, "template"))
        if contains_unresolved(for_each) or contains_unresolved(template):
            return UNRESOLVED
        if not isinstance(for_each, Mapping) or not for_each:
            raise fail("the for_each argument must contain a map", path)
        keys, lists, lengths = [], [], set()
        for key, values in for_each.items():
            keys.append(key)
            if values is None:
                lists.append([])
                continue
            maps_ok = allow_maps and nested
            if not (is_sequence(values) or (maps_ok and isinstance(values, Mapping))):
                kinds = "lists or maps" if maps_ok else "lists"
                raise fail(f"the values of for_each must be {kinds}; {key!r} is not", path)
            lists.append(list(values))
            lengths.add(len(values))
        if not nested and len(lengths) > 1:
            raise fail("the for_each lists must have the same length without permutations",
                       path)
        _check_copies(math.prod(map(len, lists)) if nested else min(map(len, lists)),
                      template, path)
        combos = itertools.product(*lists) if nested else zip(*lists, strict=False)
        budget = sizes.TextBudget(path)
        return [_replace_in(template, dict(zip(keys, combo, strict=True)), budget)
                for combo in combos]
    return repeat


def _check_copies(copies, template, path):
    """Refuse a repeat before it makes its copies if they hold too many values."""
    if copies <= 1:
        return  # no more than the template itself
    sizes.check_items(copies, path)
    # Each copy is new data as large as the template: its values are counted,
    # no further than the most one copy may hold (first under the floor, the
    # option is only read above it).
    if copies * sizes.count_values(template, sizes.ITEMS_FLOOR // copies) <= sizes.ITEMS_FLOOR:
        return
    limit = sizes.max_items()
    weight = sizes.count_values(template, limit // copies)
    if copies * weight > limit:
        raise sizes.too_large(f"would make {copies} copies of its template, at least "
                              f"{copies * weight} values", sizes.ITEMS_OPTION, path)


map_merge = Function(_map_merge)
map_replace = Function(_map_replace)
list_concat = Function(_list_concat)
list_concat_unique = Function(_list_concat_unique)
filter_values = Function(_filter)
contains = Function(_contains)
fn_select = Function(_fn_select)
fn_member_list_to_map = Function(_member_list_to_map)
repeat = Function(_make_repeat(allow_maps=False, permutations_key=False), lazy=True)
repeat_with_map = Function(_make_repeat(allow_maps=True, permutations_key=False), lazy=True)
repeat_nested = Function(_make_repeat(allow_maps=True, permutations_key=True), lazy=True)
