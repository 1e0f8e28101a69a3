"""String functions: list_join, str_replace (+ _strict, _vstrict), str_split,
digest, make_url, and the CFN Fn::Join / Fn::Split / Fn::Replace / Fn::Base64.

Semantics follow heat/engine/hot/functions.py (Join, JoinMultiple, Replace,
ReplaceJson, ReplaceJsonStrict, ReplaceJsonVeryStrict, StrSplit, Digest,
MakeURL) and heat/engine/cfn/functions.py.
"""

import hashlib
from collections.abc import Mapping
from urllib import parse as urlparse

from nestedflow.template.functions import sizes
from nestedflow.template.functions.base import Function, fail, is_sequence, to_json


def _join_single(args, ctx, path):
    # list_join up to 2015-04-30 and Fn::Join: [delimiter, [strings]].
    if not is_sequence(args) or len(args) != 2:
        raise fail(f"expects [delimiter, list], got {args!r}", path)
    delimiter, items = args
    items = [] if items is None else items
    if not is_sequence(items):
        raise fail(f"must operate on a list, got {items!r}", path)
    if not isinstance(delimiter, str):
        raise fail(f"delimiter must be a string, got {delimiter!r}", path)
    size = len(delimiter) * (len(items) - 1) if items else 0
    for item in items:
        if item is not None:
            if not isinstance(item, str):
                raise fail(f"items to join must be strings, not {item!r:.200}", path)
            size += len(item)
    sizes.check_string(size, path)
    return delimiter.join("" if item is None else item for item in items)


def _join_text(item, path):
    if item is None:
        return ""
    if isinstance(item, str):
        return item
    if isinstance(item, (Mapping, list, tuple)):
        return to_json(item)
    raise fail(f"items to join must be strings, maps or lists, not {item!r:.200}", path)


def _join_multiple(args, ctx, path):
    # list_join from 2015-10-15: [delimiter, list, list...]; maps and lists
    # inside are joined as JSON (Heat's JoinMultiple).
    if not is_sequence(args) or len(args) < 2:
        raise fail(f"expects [delimiter, list, ...], got {args!r}", path)
    delimiter, *lists = args
    if not isinstance(delimiter, str):
        raise fail(f"delimiter must be a string, got {delimiter!r}", path)
    items = []
    for number, joined in enumerate(lists, start=1):
        if not joined:
            continue
        if not is_sequence(joined):
            raise fail(f"argument {number} must be a list, got {joined!r}", path)
        items.extend(joined)
    size = len(delimiter) * (len(items) - 1) if items else 0
    limit = sizes.STRING_FLOOR
    texts = []
    for item in items:
        text = _join_text(item, path)
        size += len(text)
        # Counted item by item: the JSON of a map is only known once made,
        # and one large map listed many times would be dumped every time.
        if size > limit:
            limit = max(limit, sizes.max_string())
            if size > limit:
                break
        texts.append(text)
    sizes.check_string(size, path)
    return delimiter.join(texts)


def _replace_all(text, keys, values, path):
    # Split on the longest key first and recurse into the pieces, so text that
    # was substituted in is never scanned again for other keys (Heat's Replace).
    if not keys:
        return text, set()
    key, rest = keys[0], keys[1:]
    parts = text.split(key)
    if len(parts) == 1:
        return _replace_all(text, rest, values, path)
    value = values[key]
    size = len(value) * (len(parts) - 1)
    found = {key}
    replaced = []
    for part in parts:
        text_part, found_part = _replace_all(part, rest, values, path)
        size += len(text_part)
        replaced.append(text_part)
        found |= found_part
    # Checked before joining: a long value times a placeholder written many
    # times is the one product here that can outgrow the memory.
    sizes.check_string(size, path)
    return value.join(replaced), found


def _replacement_plain(value, key, path):
    if value is None:
        return ""
    if not isinstance(value, (str, int, float, bool)):
        raise fail(f"params must be strings or numbers, param {key!r} is not", path)
    return str(value)


def _make_replacement_json(allow_empty):
    def replacement(value, key, path):
        empty = value is None or (
            isinstance(value, (str, Mapping, list, tuple)) and len(value) == 0)
        if empty and not allow_empty:
            raise fail(f"param {key!r} has an undefined or empty value; "
                       "it must be a defined non-empty value", path)
        if value is None:
            return ""
        if isinstance(value, (Mapping, list, tuple)):
            return to_json(value)
        if not isinstance(value, (str, int, float, bool)):
            raise fail(f"params must be strings, numbers, lists or maps; {key!r} is not", path)
        return str(value)
    return replacement


def _make_replace(replacement, strict):
    def replace(args, ctx, path):
        if not isinstance(args, Mapping):
            raise fail("arguments must be a map with template and params", path)
        if "params" not in args or "template" not in args:
            raise fail("syntax is {template: 'text var1', params: {var1: value}}", path)
        template, params = args["template"], args["params"]
        if not isinstance(params, Mapping):
            raise fail(f"params must be a map, got {params!r}", path)
        if not isinstance(template, str):
            raise fail(f"template must be a string, got {template!r}", path)
        return _substitute(template, params, replacement, strict, path)
    return replace


def _substitute(template, params, replacement, strict, path):
    for key in params:
        if not isinstance(key, str):
            raise fail(f"param placeholders must be strings, got {key!r}", path)
        if not key:
            raise fail("param placeholders must not be empty", path)
    # Longest key first; among equal lengths, the lexicographically smaller.
    keys = sorted(sorted(params), key=len, reverse=True)
    values = {key: replacement(params[key], key, path) for key in keys}
    text, found = _replace_all(template, keys, values, path)
    if strict:
        missing = [key for key in keys if key not in found]
        if missing:
            raise fail(f"params not found in the template: {','.join(missing)}", path)
    return text


def _fn_replace(args, ctx, path):
    if not is_sequence(args) or len(args) != 2:
        raise fail('expects [{"$var1": "foo"}, "$var1 is foo"]', path)
    params, template = args
    if not isinstance(params, Mapping):
        raise fail(f"parameters must be a map, got {params!r}", path)
    if not isinstance(template, str):
        raise fail(f"template must be a string, got {template!r}", path)
    return _substitute(template, params, _replacement_plain, False, path)


def _str_split(args, ctx, path):
    if not is_sequence(args) or len(args) not in (2, 3):
        raise fail(f'expects [",", "apples,pears", <index>], got {args!r}', path)
    delimiter, text = args[0], args[1]
    if text is None:
        return None
    if not isinstance(delimiter, str) or not delimiter:
        raise fail(f"delimiter must be a non-empty string, got {delimiter!r}", path)
    if not isinstance(text, str):
        raise fail(f"can only split a string, got {text!r}", path)
    parts = _split(text, delimiter, path)
    if len(args) == 2:
        return parts
    try:
        index = int(args[2])
    except (TypeError, ValueError):
        raise fail(f"index must be an integer, got {args[2]!r}", path) from None
    try:
        return parts[index]
    except IndexError:
        raise fail(f"index {index} is not between 0 and {len(parts) - 1}", path) from None


def _fn_split(args, ctx, path):
    if not is_sequence(args) or len(args) != 2:
        raise fail('expects [",", "str1,str2"]', path)
    delimiter, text = args
    if not isinstance(delimiter, str) or not delimiter:
        raise fail(f"delimiter must be a non-empty string, got {delimiter!r}", path)
    if not isinstance(text, str):
        raise fail(f"string to split must be a string, got {text!r}", path)
    return _split(text, delimiter, path)


def _split(text, delimiter, path):
    # Only a text long enough to hold too many delimiters is scanned for them.
    most = len(text) // len(delimiter) + 1
    if most > sizes.ITEMS_FLOOR and most > sizes.max_items():
        sizes.check_items(text.count(delimiter) + 1, path)
    return text.split(delimiter)


def _fn_base64(args, ctx, path):
    # Heat's Fn::Base64 performs no conversion: Heat takes user data as text.
    if not isinstance(args, str):
        raise fail(f"argument must be a string, got {args!r}", path)
    return args


def _digest(args, ctx, path):
    if not is_sequence(args) or not all(isinstance(arg, str) for arg in args):
        raise fail("argument must be a list of strings", path)
    if len(args) != 2:
        raise fail('usage: ["<algorithm>", "<value>"]', path)
    algorithm, value = args
    if algorithm.lower() not in hashlib.algorithms_available:
        raise fail(f"algorithm must be one of {sorted(hashlib.algorithms_available)}", path)
    digest = hashlib.new(algorithm)
    digest.update(value.encode("latin-1"))
    return digest.hexdigest()


_URL_KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")


def _check_url_args(args, path):
    for key, value in args.items():
        if key == "query":
            if not isinstance(value, Mapping):
                raise fail(f"the query argument must be a map, got {value!r}", path)
        elif key == "port":
            try:
                port = int(value)
            except (TypeError, ValueError):
                raise fail(f"invalid URL port {value!r}", path) from None
            if not 0 < port <= 65535:
                raise fail(f"invalid URL port {port}, must be in range 1-65535", path)
        elif not isinstance(value, str):
            raise fail(f"the {key} argument must be a string, got {value!r}", path)


def _netloc(args):
    username = urlparse.quote(args.get("username", ""), safe="")
    password = urlparse.quote(args.get("password", ""), safe="")
    parts = []
    if username or password:
        parts.append(username)
        if password:
            parts += [":", password]
        parts.append("@")
    host = args.get("host", "")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = urlparse.quote(host, safe=":")
    parts.append(f"[{host}]" if ":" in host else host)
    port = args.get("port", "")
    if port:
        parts += [":", str(port)]
    return "".join(parts)


def check_url_keys(args, path):
    invalid = sorted(str(key) for key in set(args) - set(_URL_KEYS))
    if invalid:
        raise fail(f"invalid arguments: {', '.join(invalid)}", path)


def _make_url(args, ctx, path):
    if not isinstance(args, Mapping):
        raise fail("arguments must be a map", path)
    check_url_keys(args, path)
    _check_url_args(args, path)
    scheme = args.get("scheme", "")
    if ":" in scheme:
        raise fail("URL scheme should not contain ':'", path)
    url_path = urlparse.quote(args.get("path", ""))
    query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
    fragment = urlparse.quote(args.get("fragment", ""))
    return sizes.text(urlparse.urlunsplit((scheme, _netloc(args), url_path, query, fragment)),
                      path)


list_join = Function(_join_single)
list_join_multiple = Function(_join_multiple)
fn_join = Function(_join_single)
str_replace = Function(_make_replace(_replacement_plain, strict=False))
str_replace_json = Function(_make_replace(_make_replacement_json(True), strict=False))
str_replace_strict = Function(_make_replace(_make_replacement_json(True), strict=True))
str_replace_vstrict = Function(_make_replace(_make_replacement_json(False), strict=True))
fn_replace = Function(_fn_replace)
str_split = Function(_str_split)
fn_split = Function(_fn_split)
fn_base64 = Function(_fn_base64)
digest = Function(_digest)
make_url = Function(_make_url)
