"""HOT intrinsic functions (``get_param``, ``get_attr``, ``str_replace`` ...).

A snippet is plain template data; a mapping with exactly one key that names a
function is a call. :func:`resolve` evaluates calls bottom-up: arguments are
resolved first (except ``repeat``'s template, which is resolved after the
loop variables are substituted into it).
"""

import itertools
import json
from collections import namedtuple
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from nestedflow.exceptions import StackValidationFailed
from nestedflow.resources.schema import UNRESOLVED, contains_unresolved


@dataclass
class ResolveContext:
    """What functions may read while resolving.

    ``get_resource(name)`` returns a resource's reference id.
    ``get_attr(name, attr, path_list)`` returns attribute ``attr`` of resource
    ``name`` with the keys / indexes in ``path_list`` already applied (engines
    can use :func:`select_path` for that; it follows Heat: a missing key gives
    None). Either callable may return :data:`UNRESOLVED`.
    """

    parameters: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    get_resource: Callable | None = None
    get_attr: Callable | None = None


Reference = namedtuple("Reference", "kind resource attribute path")
Reference.__doc__ = """A get_resource / get_attr call found in a snippet.

``attribute`` is None for get_resource, or when the attribute name is computed.
``path`` is the location of the call itself (e.g. ``resources.b.properties.value``).
"""


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _index(path, i):
    return f"{path}[{i}]"


def _fail(message, path):
    return StackValidationFailed(message, path=path)


def _as_call(snippet):
    if isinstance(snippet, Mapping) and len(snippet) == 1:
        ((name, args),) = snippet.items()
        if name in FUNCTIONS:
            return name, args
    return None


def _step(value, key):
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
            value = _step(value, key)
        except (LookupError, TypeError):
            return missing
    return value


def _get_param(args, ctx, path):
    if isinstance(args, str):
        name, keys = args, []
    elif isinstance(args, list) and args and isinstance(args[0], str):
        name, keys = args[0], args[1:]
    else:
        raise _fail(f"expects a parameter name or [name, key, ...], got {args!r}", path)
    if name not in ctx.parameters:
        raise _fail(f"unknown parameter {name!r}", path)
    value = ctx.parameters[name]
    for key in keys:
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise _fail(f"path items must be strings or integers, got {key!r}", path)
        try:
            value = _step(value, key)
        except LookupError:
            # Heat returns an empty string for a path that is not there.
            return ""
        except TypeError as exc:
            raise _fail(f"parameter {name!r}: {exc}", path) from None
    return value


def _get_resource(args, ctx, path):
    if not isinstance(args, str):
        raise _fail(f"expects a resource name, got {args!r}", path)
    if ctx.get_resource is None:
        raise _fail("get_resource is not available here", path)
    return ctx.get_resource(args)


def _get_attr(args, ctx, path):
    if not isinstance(args, list) or len(args) < 2:
        raise _fail(f"expects [resource, attribute, key...], got {args!r}", path)
    name, attr, *rest = args
    if not isinstance(name, str) or not isinstance(attr, str):
        raise _fail(f"resource and attribute names must be strings, got {args!r}", path)
    for key in rest:
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise _fail(f"path items must be strings or integers, got {key!r}", path)
    if ctx.get_attr is None:
        raise _fail("get_attr is not available here", path)
    return ctx.get_attr(name, attr, list(rest))


def _get_file(args, ctx, path):
    if not isinstance(args, str):
        raise _fail(f"expects a file name, got {args!r}", path)
    files = ctx.files or {}
    if args not in files:
        raise _fail(f"file {args!r} is not in the files map", path)
    return files[args]


def _to_text(value):
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _list_join(args, ctx, path):
    if not isinstance(args, list) or not args:
        raise _fail(f"expects [separator, list, ...], got {args!r}", path)
    separator, *lists = args
    if not isinstance(separator, str):
        raise _fail(f"separator must be a string, got {separator!r}", path)
    items = []
    for number, joined in enumerate(lists, start=1):
        if not isinstance(joined, list):
            raise _fail(f"argument {number} must be a list, got {joined!r}", path)
        items.extend(joined)
    return separator.join(_to_text(item) for item in items)


def _fn_join(args, ctx, path):
    if not isinstance(args, list) or len(args) != 2:
        raise _fail(f"expects [separator, list], got {args!r}", path)
    separator, joined = args
    if not isinstance(separator, str) or not isinstance(joined, list):
        raise _fail(f"expects [separator, list], got {args!r}", path)
    return separator.join(_to_text(item) for item in joined)


def _replace_all(text, pairs):
    # Split on the longest key first and recurse into the pieces, so text that
    # was substituted in is never scanned again for other keys (Heat does the same).
    if not pairs:
        return text
    (key, value), rest = pairs[0], pairs[1:]
    return value.join(_replace_all(part, rest) for part in text.split(key))


def _str_replace_args(args, path):
    if not isinstance(args, Mapping) or set(args) != {"template", "params"}:
        raise _fail("expects a mapping with exactly template and params", path)
    template, params = args["template"], args["params"]
    if not isinstance(template, str):
        raise _fail(f"template must be a string, got {template!r}", path)
    if not isinstance(params, Mapping):
        raise _fail(f"params must be a mapping, got {params!r}", path)
    pairs = []
    for key, value in params.items():
        key = _to_text(key)
        if not key:
            raise _fail("params keys must not be empty", path)
        pairs.append((key, _to_text(value)))
    pairs.sort(key=lambda pair: (-len(pair[0]), pair[0]))
    return template, pairs


def _str_replace(args, ctx, path):
    template, pairs = _str_replace_args(args, path)
    return _replace_all(template, pairs)


def _str_replace_strict(args, ctx, path):
    template, pairs = _str_replace_args(args, path)
    missing = sorted(key for key, _ in pairs if key not in template)
    if missing:
        raise _fail(f"params keys not found in template: {missing}", path)
    return _replace_all(template, pairs)


def _str_split(args, ctx, path):
    if not isinstance(args, list) or len(args) not in (2, 3):
        raise _fail(f"expects [separator, string, optional index], got {args!r}", path)
    separator, text = args[0], args[1]
    if not isinstance(separator, str) or not separator:
        raise _fail(f"separator must be a non-empty string, got {separator!r}", path)
    if not isinstance(text, str):
        raise _fail(f"can only split a string, got {text!r}", path)
    parts = text.split(separator)
    if len(args) == 2:
        return parts
    index = args[2]
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(parts):
        raise _fail(f"index {args[2]!r} out of range for {len(parts)} items", path)
    return parts[index]


def _concat_lists(args, path):
    if not isinstance(args, list):
        raise _fail(f"expects a list of lists, got {args!r}", path)
    result = []
    for number, item in enumerate(args):
        if not isinstance(item, list):
            raise _fail(f"item {number} must be a list, got {item!r}", path)
        result.extend(item)
    return result


def _list_concat(args, ctx, path):
    return _concat_lists(args, path)


def _list_concat_unique(args, ctx, path):
    unique = []
    # Items may be unhashable (maps), so compare by equality.
    for item in _concat_lists(args, path):
        if item not in unique:
            unique.append(item)
    return unique


def _map_merge(args, ctx, path):
    if not isinstance(args, list):
        raise _fail(f"expects a list of maps, got {args!r}", path)
    merged = {}
    for number, item in enumerate(args):
        if not isinstance(item, Mapping):
            raise _fail(f"item {number} must be a map, got {item!r}", path)
        merged.update(item)
    return merged


def _map_replace(args, ctx, path):
    if not isinstance(args, list) or len(args) != 2:
        raise _fail("expects [map, {keys: {...}, values: {...}}]", path)
    source, spec = args
    if not isinstance(source, Mapping):
        raise _fail(f"first argument must be a map, got {source!r}", path)
    if not isinstance(spec, Mapping) or not set(spec) <= {"keys", "values"}:
        raise _fail("second argument must be a map with keys and/or values", path)
    key_map = {} if spec.get("keys") is None else spec["keys"]
    value_map = {} if spec.get("values") is None else spec["values"]
    if not isinstance(key_map, Mapping) or not isinstance(value_map, Mapping):
        raise _fail("keys and values must be maps", path)
    result = {}
    for key, value in source.items():
        new_key = key_map.get(key, key)
        if new_key in result:
            raise _fail(f"key {new_key!r} collides with another key after replacement", path)
        try:
            value = value_map.get(value, value)
        except TypeError:
            pass  # unhashable values cannot be replacement targets
        result[new_key] = value
    return result


def _substitute(snippet, replacements):
    if isinstance(snippet, str):
        if snippet in replacements:
            return replacements[snippet]
        for key, value in replacements.items():
            snippet = snippet.replace(key, _to_text(value))
        return snippet
    if isinstance(snippet, Mapping):
        return {
            _to_text(_substitute(key, replacements)): _substitute(value, replacements)
            for key, value in snippet.items()
        }
    if isinstance(snippet, list):
        return [_substitute(item, replacements) for item in snippet]
    return snippet


def _repeat(args, ctx, path):
    if not isinstance(args, Mapping) or not {"for_each", "template"} <= set(args):
        raise _fail("expects a mapping with for_each and template", path)
    unknown = set(args) - {"for_each", "template", "permutations"}
    if unknown:
        raise _fail(f"unknown keys {sorted(unknown)}", path)
    for_each = resolve(args["for_each"], ctx, _join(path, "for_each"))
    permutations = resolve(args.get("permutations", True), ctx, _join(path, "permutations"))
    if contains_unresolved(for_each):
        return UNRESOLVED
    if not isinstance(for_each, Mapping) or not for_each:
        raise _fail("for_each must be a non-empty map of placeholder to list", path)
    for key, values in for_each.items():
        if not isinstance(values, list):
            raise _fail(f"for_each value of {key!r} must be a list, got {values!r}", path)
    if not isinstance(permutations, bool):
        raise _fail("permutations must be a boolean", path)
    keys = list(for_each)
    if permutations:
        combos = itertools.product(*for_each.values())
    else:
        lengths = {len(values) for values in for_each.values()}
        if len(lengths) > 1:
            raise _fail("for_each lists must have the same length without permutations", path)
        combos = zip(*for_each.values(), strict=True)
    template_path = _join(path, "template")
    return [
        resolve(
            _substitute(args["template"], dict(zip(keys, combo, strict=True))), ctx, template_path
        )
        for combo in combos
    ]


_EAGER = {
    "get_param": _get_param,
    "get_resource": _get_resource,
    "get_attr": _get_attr,
    "get_file": _get_file,
    "list_join": _list_join,
    "str_replace": _str_replace,
    "str_replace_strict": _str_replace_strict,
    "str_split": _str_split,
    "list_concat": _list_concat,
    "list_concat_unique": _list_concat_unique,
    "map_merge": _map_merge,
    "map_replace": _map_replace,
    "Fn::Join": _fn_join,
}
# These resolve (parts of) their own arguments.
_LAZY = {"repeat": _repeat}

FUNCTIONS = frozenset(_EAGER) | frozenset(_LAZY)


def resolve(snippet, ctx, path=""):
    """Return ``snippet`` with every function call evaluated.

    ``path`` is where the snippet sits in the template; errors name
    ``path.function``. A call whose arguments are (or contain) UNRESOLVED
    yields UNRESOLVED.
    """
    call = _as_call(snippet)
    if call is not None:
        name, args = call
        fn_path = _join(path, name)
        if name in _LAZY:
            return _LAZY[name](args, ctx, fn_path)
        args = resolve(args, ctx, fn_path)
        if contains_unresolved(args):
            return UNRESOLVED
        return _EAGER[name](args, ctx, fn_path)
    if isinstance(snippet, Mapping):
        return {key: resolve(value, ctx, _join(path, key)) for key, value in snippet.items()}
    if isinstance(snippet, list):
        return [resolve(item, ctx, _index(path, i)) for i, item in enumerate(snippet)]
    return snippet


def _calls(snippet, path=""):
    """Every function call in ``snippet`` as ``(name, args, path)``, in document order."""
    # Iterative walk: snippets can be arbitrarily deep.
    pending = [(snippet, path)]
    while pending:
        node, node_path = pending.pop()
        call = _as_call(node)
        if call is not None:
            name, args = call
            yield name, args, node_path
            pending.append((args, _join(node_path, name)))
        elif isinstance(node, Mapping):
            items = list(node.items())
            pending.extend((value, _join(node_path, key)) for key, value in reversed(items))
        elif isinstance(node, list):
            pending.extend(
                (item, _index(node_path, i)) for i, item in reversed(list(enumerate(node)))
            )


def find_references(snippet, path=""):
    """Return every get_resource / get_attr call in ``snippet`` as a :class:`Reference`,
    in document order. Calls whose resource name is computed are skipped."""
    found = []
    for name, args, node_path in _calls(snippet, path):
        if name == "get_resource" and isinstance(args, str):
            found.append(Reference(name, args, None, node_path))
        elif name == "get_attr" and isinstance(args, list) and args:
            if isinstance(args[0], str):
                attr = args[1] if len(args) > 1 and isinstance(args[1], str) else None
                found.append(Reference(name, args[0], attr, node_path))
    return found


def computes_references(snippet):
    """Whether a get_resource / get_attr call in ``snippet`` computes its resource name
    (so that which resources it reads is only known when it is resolved)."""
    for name, args, _ in _calls(snippet):
        if name == "get_resource" and not isinstance(args, str):
            return True
        if name == "get_attr" and not (isinstance(args, list) and args
                                       and isinstance(args[0], str)):
            return True
    return False


def references(snippet):
    """Names of the resources that ``snippet`` refers to with get_resource / get_attr."""
    return {ref.resource for ref in find_references(snippet)}


def attribute_references(snippet):
    """``(resource, attribute)`` pairs read by get_attr in ``snippet``; either is
    None where the call computes it (so that any resource, or any attribute of
    the resource, may be read)."""
    reads = set()
    for name, args, _ in _calls(snippet):
        if name == "get_attr" and isinstance(args, list) and args:
            resource = args[0] if isinstance(args[0], str) else None
            attr = args[1] if len(args) > 1 and isinstance(args[1], str) else None
            reads.add((resource, attr))
    return reads


