"""Which intrinsic functions each ``heat_template_version`` has.

The tables are Heat's (heat/engine/hot/template.py: HOTemplate20130523 ...
HOTemplate20210416, their ``functions`` and ``condition_functions`` dicts),
built the same way: each version starts from the previous one. Where Heat
changed a function's behaviour between versions (``get_attr``'s
all-attributes form, ``list_join`` of several lists, ``str_replace`` of maps,
``repeat`` over maps and with ``permutations``, nullable ``if``) the table
holds the implementation of that version.

Heat marks CFN functions it dropped as ``Removed``; they are refused with the
version. Inside conditions, Heat refuses every other function as invalid in
that context. A one-key map whose key is a function of *another* version (or
a condition function outside conditions) is refused too, naming the version
that has it, instead of being kept as literal data.
"""

from nestedflow.exceptions import StackValidationFailed
from nestedflow.template.functions import conditions as cond
from nestedflow.template.functions import core, data, expressions, strings

HOT_VERSIONS = (
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
)
LATEST = HOT_VERSIONS[-1]
# Release names are aliases of the date version of that release.
RELEASE_NAMES = {
    "newton": "2016-10-14",
    "ocata": "2017-02-24",
    "pike": "2017-09-01",
    "queens": "2018-03-02",
    "rocky": "2018-08-31",
    "wallaby": "2021-04-16",
}
#: Versions that have the ``conditions`` section and ``condition:`` keys.
CONDITIONS_SINCE = "2016-10-14"

#: get_resource / get_attr: the calls that make dependencies (Ref too, in 2013-05-23).
REFERENCE_FUNCTIONS = frozenset({"get_resource", "get_attr", "Ref"})


class Refused:
    """A name Heat's table lists but refuses: removed, or invalid in conditions."""

    def __init__(self, reason):
        self.reason = reason

    def message(self, name, version):
        if self.reason == "removed":
            return (f"function {name!r} is not supported in heat_template_version "
                    f"{version} (it was removed in 2014-10-16 or later)")
        return f"function {name!r} is not allowed in a condition"


REMOVED = Refused("removed")
INVALID = Refused("invalid")


def _build():
    functions, conditions = {}, {}
    table = {
        "Fn::GetAZs": core.get_azs,
        "get_param": core.get_param,
        "get_resource": core.get_resource,
        "Ref": core.ref,
        "get_attr": core.get_attr,
        "Fn::Select": data.fn_select,
        "Fn::Join": strings.fn_join,
        "list_join": strings.list_join,
        "Fn::Split": strings.fn_split,
        "str_replace": strings.str_replace,
        "Fn::Replace": strings.fn_replace,
        "Fn::Base64": strings.fn_base64,
        "Fn::MemberListToMap": data.fn_member_list_to_map,
        "resource_facade": core.resource_facade,
        "Fn::ResourceFacade": core.fn_resource_facade,
        "get_file": core.get_file,
    }
    cond_table = {}
    changes = {
        "2013-05-23": {},
        "2014-10-16": dict.fromkeys(
            ("Fn::GetAZs", "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
             "Fn::MemberListToMap", "Fn::ResourceFacade", "Ref"), REMOVED),
        "2015-04-30": {"repeat": data.repeat, "digest": strings.digest},
        "2015-10-15": {"get_attr": core.get_attr_all, "list_join": strings.list_join_multiple,
                       "str_replace": strings.str_replace_json, "str_split": strings.str_split,
                       "Fn::Select": REMOVED},
        "2016-04-08": {"map_merge": data.map_merge},
        "2016-10-14": {"repeat": data.repeat_with_map, "yaql": expressions.yaql,
                       "map_replace": data.map_replace, "if": cond.if_},
        "2017-02-24": {"filter": data.filter_values,
                       "str_replace_strict": strings.str_replace_strict},
        "2017-09-01": {"repeat": data.repeat_nested, "make_url": strings.make_url,
                       "list_concat": data.list_concat,
                       "str_replace_vstrict": strings.str_replace_vstrict,
                       "list_concat_unique": data.list_concat_unique,
                       "contains": data.contains},
        "2018-03-02": {},
        "2018-08-31": {},
        "2021-04-16": {"if": cond.if_nullable},
    }
    cond_changes = {
        "2016-10-14": {"get_param": core.get_param, "equals": cond.equals, "not": cond.not_,
                       "and": cond.and_, "or": cond.or_},
        "2017-09-01": {"yaql": expressions.yaql, "contains": data.contains},
    }
    for version in HOT_VERSIONS:
        table = {**table, **changes[version]}
        cond_table = {**cond_table, **cond_changes.get(version, {})}
        functions[version] = table
        if version >= CONDITIONS_SINCE:
            # Heat's _parser_condition_functions: every other function is
            # invalid in a condition, removed ones stay removed.
            in_condition = {name: (fn if fn is REMOVED else INVALID)
                            for name, fn in table.items()}
            conditions[version] = {**in_condition, **cond_table}
        else:
            conditions[version] = {}
    return functions, conditions


_FUNCTIONS, _CONDITION_FUNCTIONS = _build()
_ALL_NAMES = frozenset(
    name for table in (*_FUNCTIONS.values(), *_CONDITION_FUNCTIONS.values()) for name in table)


def function_table(version):
    """name -> Function (or a :class:`Refused`) for values in ``version``."""
    return _FUNCTIONS[version]


def condition_table(version):
    """name -> Function (or a :class:`Refused`) inside conditions of ``version``."""
    return _CONDITION_FUNCTIONS[version]


def _first_version_with(name, tables):
    for version in HOT_VERSIONS:
        fn = tables[version].get(name)
        if fn is not None and not isinstance(fn, Refused):
            return version
    return None


def check_unknown(name, version, table, path):
    """Refuse ``{name: ...}`` where ``name`` is a function elsewhere, not here.

    Keys that are no function in any version are data, as in Heat.
    """
    if name not in _ALL_NAMES and not (isinstance(name, str) and name.startswith("Fn::")):
        return
    if name not in _ALL_NAMES:
        raise StackValidationFailed(f"unknown function {name!r}", path=path)
    since = _first_version_with(name, _FUNCTIONS)
    if since is not None and since > version:
        raise StackValidationFailed(
            f"function {name!r} needs heat_template_version {since} or later; "
            f"this template is {version}", path=path)
    if since is not None and table is _CONDITION_FUNCTIONS.get(version):
        raise StackValidationFailed(f"function {name!r} is not allowed in a condition",
                                    path=path)
    cond_since = _first_version_with(name, _CONDITION_FUNCTIONS)
    if since is None and cond_since is not None:
        if cond_since > version:
            raise StackValidationFailed(
                f"function {name!r} needs heat_template_version {cond_since} or later "
                f"and is only allowed in conditions; this template is {version}", path=path)
        raise StackValidationFailed(
            f"function {name!r} is only allowed in conditions (the conditions section, "
            "condition: keys and the first argument of if)", path=path)
    raise StackValidationFailed(
        f"function {name!r} is not available in heat_template_version {version}", path=path)


def matrix():
    """``{version: {name: "yes" | "removed" | "condition" | "yes, condition"}}``.

    For documentation and the test that compares it with Heat's tables.
    """
    result = {}
    for version in HOT_VERSIONS:
        row = {}
        for name, fn in _FUNCTIONS[version].items():
            row[name] = "removed" if fn is REMOVED else "yes"
        for name, fn in _CONDITION_FUNCTIONS[version].items():
            if not isinstance(fn, Refused):
                row[name] = "yes, condition" if row.get(name) == "yes" else "condition"
        result[version] = row
    return result


_CELLS = {"yes": "yes", "removed": "removed", "condition": "cond", "yes, condition": "yes+cond"}


def matrix_rst():
    """The function/version matrix as an RST table (doc/source/templates.rst).

    Rows are functions in the order Heat added them; ``yes``: a function of
    that version; ``cond``: only inside conditions; ``removed``: refused as
    Heat's ``Removed``; blank: not a function there (refused with the version
    that has it).
    """
    table = matrix()
    names = []
    for version in HOT_VERSIONS:
        names += [name for name in table[version] if name not in names]
    hot = [name for name in names if not name.startswith("Fn::") and name != "Ref"]
    names = hot + [name for name in names if name not in hot]
    rows = [["function", *HOT_VERSIONS]]
    rows += [[f"``{name}``", *(_CELLS.get(table[v].get(name), "") for v in HOT_VERSIONS)]
             for name in names]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    rule = " ".join("=" * width for width in widths)

    def line(row):
        return " ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))

    lines = [rule, line(rows[0]), rule, *(line(row) for row in rows[1:]), rule]
    return "\n".join(text.rstrip() for text in lines) + "\n"


#: ``template function list`` descriptions (after Heat's function docstrings).
DESCRIPTIONS = {
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "list_join": "A function for joining strings.",
    "str_replace": "A function for performing string substitutions.",
    "str_replace_strict": "A function for performing string substitutions; "
                          "every param must occur in the template.",
    "str_replace_vstrict": "A function for performing string substitutions; "
                           "no param may be empty.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "repeat": "A function for iterating over a list of items.",
    "digest": "A function for performing digest operations.",
    "str_split": "A function for splitting delimited strings into a list.",
    "map_merge": "A function for merging maps.",
    "map_replace": "A function for performing substitutions on maps.",
    "yaql": "A function for executing a yaql expression.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "equals": "A function for comparing whether two values are equal.",
    "not": "A function that acts as a NOT operator on a condition.",
    "and": "A function that acts as an AND operator on conditions.",
    "or": "A function that acts as an OR operator on conditions.",
    "filter": "A function for filtering out values from lists.",
    "make_url": "A function for constructing a correctly-escaped URL.",
    "list_concat": "A function for extending lists.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
    "Fn::GetAZs": "A function for retrieving the availability zones.",
    "Ref": "A function for resolving parameters or resource references.",
    "Fn::Select": "A function for selecting an item from a list or map.",
    "Fn::Join": "A function for joining strings.",
    "Fn::Split": "A function for splitting strings.",
    "Fn::Replace": "A function for performing string substitutions.",
    "Fn::Base64": "A placeholder function for converting to base64.",
    "Fn::MemberListToMap": "A function to convert lists with enumerated keys and "
                           "values to mapping.",
    "Fn::ResourceFacade": "A function for retrieving data in a parent provider template.",
}


def available(version, with_conditions=False):
    """Names of the functions ``version`` accepts (as Heat's
    list_template_functions: removed ones left out), sorted."""
    names = {name for name, fn in _FUNCTIONS[version].items() if not isinstance(fn, Refused)}
    if with_conditions:
        names |= {name for name, fn in _CONDITION_FUNCTIONS[version].items()
                  if not isinstance(fn, Refused)}
    return sorted(names)
