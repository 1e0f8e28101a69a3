"""Size limits on what a user hands in (templates, environments, parameter
values), checked while parsing so nothing oversized is stored or walked.

The same walk refuses values JSON cannot store (a caller's dict may hold
dates, sets, bytes, NaN...): they would otherwise reach the database and fail
there, after validation passed.

A YAML alias refers to an already-built value, so parsing "billion laughs"
is cheap; every later walk (validation, deep copies, JSON dumps) expands it.
:func:`check_structure` counts values as those walks would and stops at the
limit, so its own cost is bounded by ``[engine] max_template_values``.
"""

import datetime
import json
import math
from collections.abc import Mapping

from nestedflow.conf import CONF
from nestedflow.exceptions import StackValidationFailed

#: Mapping keys json.dumps writes (as strings).
_JSON_KEYS = (str, int, float, bool, type(None))


def _not_json(value, what, trail):
    """StackValidationFailed for a value JSON cannot store."""
    path = _path(what, trail)
    if isinstance(value, float):
        shown = "nan" if math.isnan(value) else "inf"
        return StackValidationFailed(f"{shown} is not a JSON number", path=path)
    kind = type(value).__name__
    message = f"a {kind} ({value!r:.40}) cannot be stored as JSON"
    if trail is not None and trail[1] == "heat_template_version" and trail[0] is None:
        # Heat reads a version only from a string (heat/engine/template.py
        # get_version); yaml.safe_load turns an unquoted one into a date.
        message = (f"must be a string, not a {kind} ({value!r:.40}): quote it in the "
                   "YAML (yaml.safe_load reads 2017-02-24 as a date), or pass the YAML text")
    elif isinstance(value, (datetime.date, datetime.time)):
        message += "; give it as a string"
    return StackValidationFailed(message, path=path)


def check_structure(data, what="template"):
    """Raise StackValidationFailed if ``data`` nests deeper than
    ``[engine] max_template_depth``, expands to more than
    ``[engine] max_template_values`` values or holds a value JSON cannot
    store; ``what`` names it in the error."""
    max_values = CONF.engine.max_template_values
    max_depth = CONF.engine.max_template_depth
    count = 0
    # Iterative: a recursive walk would itself hit Python's recursion limit.
    # An entry's trail is (parent's trail, key), turned into a path only
    # for the error.
    stack = [(data, 0, None)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth, trail = pop()
        count += 1
        if count > max_values:
            raise StackValidationFailed(
                f"{what} holds more than {max_values} values (YAML aliases expand "
                "each time they are used)")
        # Concrete types first: the Mapping ABC check is slow, and this runs
        # over every value of every template.
        if isinstance(value, dict):
            children = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        elif isinstance(value, (str, int, type(None))):
            continue
        elif isinstance(value, float):
            if math.isfinite(value):
                continue
            raise _not_json(value, what, trail)
        elif isinstance(value, Mapping):
            children = value.items()
        elif isinstance(value, tuple):
            children = enumerate(value)
        else:
            raise _not_json(value, what, trail)
        if not isinstance(value, (list, tuple)):
            for key in value:
                if not isinstance(key, _JSON_KEYS):
                    raise _not_json(key, what, (trail, key))
        if depth >= max_depth:
            raise StackValidationFailed(
                f"nested deeper than the limit of {max_depth} levels",
                path=_path(what, trail))
        depth += 1
        for key, child in children:
            push((child, depth, (trail, key)))


def check_counts(parameters, outputs):
    """Raise StackValidationFailed if a template declares more parameters or
    outputs than ``[engine] max_parameters`` / ``max_outputs``."""
    for section, names, limit in (("parameters", parameters, CONF.engine.max_parameters),
                                  ("outputs", outputs, CONF.engine.max_outputs)):
        if isinstance(names, Mapping) and len(names) > limit:
            raise StackValidationFailed(
                f"{len(names)} {section} exceed the limit of {limit}", path=section)


def check_parameter_value(value, path):
    """Raise StackValidationFailed if one parameter value (as given by the
    user) is larger than ``[engine] max_parameter_size`` bytes or too deep."""
    limit = CONF.engine.max_parameter_size
    if isinstance(value, (str, bytes)):
        size = len(value) if isinstance(value, bytes) else len(value.encode("utf-8", "replace"))
    elif isinstance(value, (Mapping, list, tuple)):
        check_structure(value, path)
        size = len(json.dumps(value))
    else:
        check_structure(value, path)  # a scalar JSON cannot store
        return
    if size > limit:
        raise StackValidationFailed(
            f"value is {size} bytes, more than the limit of {limit} bytes", path=path)


def _path(what, trail):
    keys = []
    while trail is not None:
        trail, key = trail
        keys.append(str(key))
    return ".".join([what, *reversed(keys)])


def check_parameters_mapping(parameters):
    """Parameters are a mapping of names to values (or absent)."""
    if parameters is not None and not isinstance(parameters, Mapping):
        raise StackValidationFailed(
            f"parameters must be a mapping of names to values, not "
            f"{type(parameters).__name__}", path="parameters")
