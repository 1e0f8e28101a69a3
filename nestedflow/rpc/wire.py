"""Engine results on a wire: views as tagged dicts, and the JSON the
resident engine's socket speaks.

:func:`views_out` / :func:`views_in` are what both channels share: a
:mod:`nestedflow.engine.views` dataclass travels as
``{"nestedflow.view": "Stack", "fields": stack.to_dict()}`` and is rebuilt
with ``from_dict``. oslo.messaging's JSON does the rest for the RPC API.

The local socket (:func:`dumps` / :func:`loads`) must hand the command line
exactly what an embedded Engine returns -- the same tables and JSON come
out of the same values -- so it also tags what plain JSON would change:
datetimes (Heat's software-config dicts carry them) and tuples.

Only the standard library is imported here: the view classes are loaded
when a tagged view first arrives (``CheckResult``'s module imports the
database layer, which the resident client exists to avoid).
"""

import dataclasses
import datetime
import importlib
import json

VIEW_KEY = "nestedflow.view"
_TIME_KEY = "nestedflow.datetime"
_TUPLE_KEY = "nestedflow.tuple"

#: Class name -> class, or the module that defines it (imported on first use).
_VIEWS = {
    "Stack": "nestedflow.engine.views",
    "Resource": "nestedflow.engine.views",
    "Event": "nestedflow.engine.views",
    "CheckResult": "nestedflow.engine.checks",
}


def register_view(cls):
    """Let a view class (a :mod:`nestedflow.engine.views` dataclass with
    ``to_dict``/``from_dict``) cross the wire by its class name."""
    _VIEWS[cls.__name__] = cls
    return cls


def _view_class(name):
    found = _VIEWS.get(name)
    if isinstance(found, str):
        found = _VIEWS[name] = getattr(importlib.import_module(found), name)
    return found


def _is_view(value):
    return dataclasses.is_dataclass(value) and type(value).__name__ in _VIEWS


def views_out(entity):
    """``entity`` with its views (at the top or in a list) as tagged dicts."""
    if _is_view(entity):
        return {VIEW_KEY: type(entity).__name__, "fields": entity.to_dict()}
    if isinstance(entity, (list, tuple)):
        return [views_out(item) for item in entity]
    return entity


def views_in(entity):
    """The inverse of :func:`views_out`; an unknown view stays its fields."""
    if isinstance(entity, dict) and VIEW_KEY in entity:
        cls = _view_class(entity[VIEW_KEY])
        return entity["fields"] if cls is None else cls.from_dict(entity["fields"])
    if isinstance(entity, list):
        return [views_in(item) for item in entity]
    return entity


def _tagged(value):
    if _is_view(value):
        # Its fields tagged too: a Stack's tags are a tuple.
        return {VIEW_KEY: type(value).__name__, "fields": _tagged(value.to_dict())}
    if isinstance(value, datetime.datetime):
        return {_TIME_KEY: value.isoformat()}
    if isinstance(value, tuple):
        return {_TUPLE_KEY: [_tagged(item) for item in value]}
    if isinstance(value, list):
        return [_tagged(item) for item in value]
    if isinstance(value, dict):
        return {key: _tagged(item) for key, item in value.items()}
    return value


def _untagged(document):
    # json.loads calls this for every object, innermost first.
    if len(document) == 1:
        if _TIME_KEY in document:
            return datetime.datetime.fromisoformat(document[_TIME_KEY])
        if _TUPLE_KEY in document:
            return tuple(document[_TUPLE_KEY])
    return views_in(document) if VIEW_KEY in document else document


def dumps(message):
    """One line of JSON (no newline inside: the socket's framing is by line).

    What JSON cannot carry (a UUID, a Decimal) goes as its text, as
    oslo.messaging's ``jsonutils.to_primitive`` sends it over RPC."""
    return json.dumps(_tagged(message), default=str, separators=(",", ":")).encode() + b"\n"


def loads(line):
    return json.loads(line, object_hook=_untagged)
