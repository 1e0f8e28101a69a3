"""Turn a template given as a dict, YAML/JSON text or a file path into a dict."""

import copy
import functools
import json
import os
from collections.abc import Mapping

import yaml

from nestedflow.exceptions import StackValidationFailed, TemplateSyntaxError
from nestedflow.template import limits

DEFAULT_MAX_SIZE = 524288

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TemplateLoader(_BaseLoader):
    """Safe YAML loader for templates, as Heat's template_format.yaml_loader.

    Dates stay strings (``heat_template_version: 2016-10-14`` is a version
    name, not a date). A key given twice in one mapping keeps its last value,
    as in Heat (PyYAML's behaviour, which Heat does not override).
    """


_TemplateLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_str
)


def _parse_yaml(text, name):
    try:
        return yaml.load(text, Loader=_TemplateLoader)  # a SafeLoader subclass
    except yaml.reader.ReaderError as exc:
        # Its text is two lines and counts from the start of the document.
        line, column = _line_and_column(text, exc.position)
        raise TemplateSyntaxError(f"unacceptable character #x{exc.character:04x}: {exc.reason}",
                                  line=line, column=column, source=name) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or str(exc)
        if mark is None:
            raise TemplateSyntaxError(problem, source=name) from None
        raise TemplateSyntaxError(problem, line=mark.line + 1, column=mark.column + 1,
                                  source=name) from None
    except yaml.YAMLError as exc:
        raise TemplateSyntaxError(str(exc), source=name) from None
    except RecursionError:
        # The pure-Python parser recurses per nesting level (libyaml stops
        # at 1000 levels with a YAMLError).
        raise TemplateSyntaxError("nested too deeply to parse", source=name) from None


def _line_and_column(text, offset):
    if _BaseLoader is not yaml.SafeLoader:
        # libyaml's offset counts UTF-8 bytes.
        text = text.encode("utf-8")[:offset].decode("utf-8", "replace")
    before = text[:offset]
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def _parse_text(text, name=None):
    # As Heat's template_format.simple_parse: JSON first (faster and exact for
    # JSON, tabs allowed), then YAML, which reports errors with a location.
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            pass  # maybe a YAML flow mapping
        except RecursionError:
            raise TemplateSyntaxError("nested too deeply to parse", source=name) from None
    data = _parse_yaml(text, name)
    return {} if data is None else data  # an empty document is an empty template


def _check_size(size, max_size, name=None):
    if max_size is not None and size > max_size:
        what = "template" if name is None else name
        raise StackValidationFailed(
            f"{what} is {size} bytes, more than the limit of {max_size} bytes"
        )


def _looks_like_path(text):
    return "\n" not in text and os.path.isfile(text)


def load(template, max_size=DEFAULT_MAX_SIZE, name=None, checked=False):
    """Return the template as a new dict.

    ``template`` may be a mapping (deep-copied, not size-checked), YAML or JSON
    text (str or bytes), or a file path (``os.PathLike``, or a one-line str
    naming an existing file). ``max_size`` (bytes, None for no limit) bounds
    text and files. ``name`` (e.g. the files-map key of a nested template)
    is named in errors; a path names itself. ``checked``: a mapping that
    passed the structure limits before (a stored template read back).
    """
    hint = ""
    if isinstance(template, Mapping):
        # Checked first: deepcopy recurses per level and expands shared values.
        if not checked:
            limits.check_structure(template, name or "template")
        return copy.deepcopy(dict(template))
    if isinstance(template, os.PathLike) or (
        isinstance(template, str) and _looks_like_path(template)
    ):
        path = os.fspath(template)
        name = name or path
        try:
            _check_size(os.path.getsize(path), max_size, name)
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise StackValidationFailed(f"cannot read template {path!r}: {exc.strerror}") from None
        text = _decode(raw, name)
    elif isinstance(template, bytes):
        _check_size(len(template), max_size, name)
        text = _decode(template, name)
    elif isinstance(template, str):
        _check_size(len(template.encode("utf-8")), max_size, name)
        text = template
        if "\n" not in template:
            hint = f" (and no file named {template!r} exists)"
    else:
        raise StackValidationFailed(
            f"{name or 'template'} must be a mapping, text or a path, "
            f"not {type(template).__name__}")
    data = _parse_text(text, name)
    limits.check_structure(data, name or "template")
    if not isinstance(data, dict):
        what = "template" if name is None else name
        raise StackValidationFailed(
            f"{what} must be a mapping at the top level, got {type(data).__name__}{hint}"
        )
    return data


def _decode(raw, name=None):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StackValidationFailed(f"{name or 'template'} is not UTF-8 text: {exc}") from None


def load_files(files):
    """Return a new ``{name: content}`` dict; bytes are decoded as UTF-8."""
    if files is None:
        return {}
    if not isinstance(files, Mapping):
        raise StackValidationFailed("files must be a mapping of name to content", path="files")
    result = {}
    for name, content in files.items():
        if isinstance(content, bytes):
            try:
                content = content.decode("utf-8")
            except UnicodeDecodeError:
                raise StackValidationFailed("content is not UTF-8", path=f"files.{name}") from None
        if not isinstance(content, str):
            raise StackValidationFailed(
                f"content must be a string, got {type(content).__name__}", path=f"files.{name}"
            )
        result[str(name)] = content
    return result


def files_reached(values, files):
    """The names of the ``files`` map that ``values`` (a template, its
    properties, an environment...) can read: every string naming a file
    (``get_file``'s argument, a template resource's ``type``, a registry
    entry), then, for a file that is a template, those it names, at any
    depth. A YAML text among the strings (an inline child template) is read
    as a template too. Conservative: a string that merely equals a file's
    name counts."""
    reached, todo = set(), list(_strings(values))
    while todo:
        text = todo.pop()
        if text in files:
            if text not in reached:
                reached.add(text)
                content = files[text]
                if isinstance(content, str):
                    todo.extend(_strings_of_text(content))
        elif "\n" in text:
            todo.extend(_strings_of_text(text))
    return reached


@functools.lru_cache(maxsize=256)
def _strings_of_text(text):
    # Members of a group share one template: parsed once, not per member.
    try:
        data = _parse_text(text)
    except (StackValidationFailed, ValueError, TypeError):
        return ()
    return tuple(_strings(data))


def _strings(value):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
