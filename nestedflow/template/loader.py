"""Turn a template given as a dict, YAML/JSON text or a file path into a dict."""

import copy
import json
import os
from collections.abc import Mapping

import yaml

from nestedflow.exceptions import StackValidationFailed, TemplateSyntaxError

DEFAULT_MAX_SIZE = 524288

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TemplateLoader(_BaseLoader):
    """Safe YAML loader for templates.

    Dates stay strings (``heat_template_version: 2016-10-14`` is a version
    name, not a date) and duplicate keys are an error, because PyYAML would
    otherwise silently keep only the last of two resources with one name.
    """

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable keys are reported by the base class
            if duplicate:
                mark = key_node.start_mark
                raise TemplateSyntaxError(
                    f"duplicate key {key!r}", line=mark.line + 1, column=mark.column + 1
                )
        return super().construct_mapping(node, deep=deep)


_TemplateLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_str
)


def _parse_yaml(text):
    try:
        return yaml.load(text, Loader=_TemplateLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or str(exc)
        if mark is None:
            raise TemplateSyntaxError(problem) from None
        raise TemplateSyntaxError(problem, line=mark.line + 1, column=mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise TemplateSyntaxError(str(exc)) from None


def _parse_text(text):
    # JSON is (almost) YAML, but the json module is faster and exact for JSON.
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass  # maybe a YAML flow mapping; YAML reports errors with a location
    return _parse_yaml(text)


def _check_size(size, max_size):
    if max_size is not None and size > max_size:
        raise StackValidationFailed(
            f"template is {size} bytes, more than the limit of {max_size} bytes"
        )


def _looks_like_path(text):
    return "\n" not in text and os.path.isfile(text)


def load(template, max_size=DEFAULT_MAX_SIZE):
    """Return the template as a new dict.

    ``template`` may be a mapping (deep-copied, not size-checked), YAML or JSON
    text (str or bytes), or a file path (``os.PathLike``, or a one-line str
    naming an existing file). ``max_size`` (bytes, None for no limit) bounds
    text and files.
    """
    hint = ""
    if isinstance(template, Mapping):
        return copy.deepcopy(dict(template))
    if isinstance(template, os.PathLike) or (
        isinstance(template, str) and _looks_like_path(template)
    ):
        path = os.fspath(template)
        try:
            _check_size(os.path.getsize(path), max_size)
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise StackValidationFailed(f"cannot read template {path!r}: {exc.strerror}") from None
        text = _decode(raw)
    elif isinstance(template, bytes):
        _check_size(len(template), max_size)
        text = _decode(template)
    elif isinstance(template, str):
        _check_size(len(template.encode("utf-8")), max_size)
        text = template
        if "\n" not in template:
            hint = f" (and no file named {template!r} exists)"
    else:
        raise StackValidationFailed(
            f"template must be a mapping, text or a path, not {type(template).__name__}"
        )
    data = _parse_text(text)
    if not isinstance(data, dict):
        raise StackValidationFailed(
            f"template must be a mapping at the top level, got {type(data).__name__}{hint}"
        )
    return data


def _decode(raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StackValidationFailed(f"template is not UTF-8 text: {exc}") from None


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
