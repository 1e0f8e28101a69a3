"""HOT intrinsic functions (``get_param``, ``get_attr``, ``str_replace`` ...).

A snippet is plain template data; a mapping with exactly one key that names a
function *of the template's version* is a call (as in Heat's
``heat.engine.template.parse``). :func:`resolve` evaluates calls bottom-up:
arguments are resolved first, except for the functions that resolve (parts
of) their own arguments (``repeat``, ``if``).

Which names are functions depends on ``heat_template_version``: the table is
in :mod:`nestedflow.template.functions.versions`. A one-key map whose key is
a function of another version (or Heat's removed CFN functions, or a
condition function outside ``conditions``) is refused with its path rather
than passed through as data, so a template never completes with a literal
``{"yaql": ...}`` where a value was meant.

The families live in submodules: :mod:`.core` (get_*), :mod:`.strings`,
:mod:`.data` (lists and maps), :mod:`.conditions`, :mod:`.expressions`
(yaql); :mod:`.sizes` bounds what one call may build.
"""

from collections import namedtuple
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties.schema import UNRESOLVED, contains_unresolved
from nestedflow.template.functions import versions
from nestedflow.template.functions.base import OMIT, index_path, join_path, select_path

__all__ = [
    "OMIT",
    "Reference",
    "ResolveContext",
    "attribute_references",
    "check_functions",
    "computes_references",
    "expand_conditions",
    "find_references",
    "references",
    "resolve",
    "select_path",
]


@dataclass
class ResolveContext:
    """What functions may read while resolving.

    ``get_resource(name)`` returns a resource's reference id.
    ``get_attr(name, attr, path_list)`` returns attribute ``attr`` of resource
    ``name`` with the keys / indexes in ``path_list`` already applied (engines
    can use :func:`select_path` for that; it follows Heat: a missing key gives
    None); ``attr`` is None for the all-attributes form ``get_attr: [name]``.
    Either callable may return :data:`UNRESOLVED`.

    ``version`` picks the function table; ``conditions`` (a
    :class:`~nestedflow.template.functions.conditions.Conditions`) answers
    condition names for ``if``; ``facade`` holds the parent resource's
    ``metadata``, ``deletion_policy`` and ``update_policy`` for
    ``resource_facade`` inside a nested stack (None at the top level).
    """

    parameters: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    get_resource: object = None
    get_attr: object = None
    version: str = versions.LATEST
    conditions: object = None
    facade: dict | None = None
    #: True while resolving a condition (the ``conditions`` section, a
    #: resource's or output's ``condition:``, the first argument of ``if``).
    in_condition: bool = False

    @property
    def table(self):
        if self.in_condition:
            return versions.condition_table(self.version)
        return versions.function_table(self.version)

    def for_condition(self):
        return self if self.in_condition else replace(self, in_condition=True)

    def for_values(self):
        return replace(self, in_condition=False) if self.in_condition else self


Reference = namedtuple("Reference", "kind resource attribute path")
Reference.__doc__ = """A get_resource / get_attr call found in a snippet.

``attribute`` is None for get_resource, for get_attr's all-attributes form, or
when the attribute name is computed.
``path`` is the location of the call itself (e.g. ``resources.b.properties.value``).
"""


def _call(snippet, table, version, path):
    """``(name, args, handler)`` if ``snippet`` is a call, None if it is data.

    Raises for a one-key map naming a function this version refuses.
    """
    if not isinstance(snippet, Mapping) or len(snippet) != 1:
        return None
    ((name, args),) = snippet.items()
    handler = table.get(name)
    if handler is None:
        versions.check_unknown(name, version, table, join_path(path, name))
        return None
    if isinstance(handler, versions.Refused):
        raise StackValidationFailed(handler.message(name, version), path=join_path(path, name))
    return name, args, handler


def resolve(snippet, ctx, path=""):
    """Return ``snippet`` with every function call evaluated.

    ``path`` is where the snippet sits in the template; errors name
    ``path.function``. A call whose arguments are (or contain) UNRESOLVED
    yields UNRESOLVED. A nullable ``if`` (2021-04-16) whose false branch is
    omitted yields :data:`OMIT`: the enclosing map entry or list item is
    dropped.
    """
    # Hot path of every traversal: the version's table is looked up once
    # per call, not at every node.
    return _walk(snippet, path, ctx, ctx.table, ctx.version)


def _walk(node, node_path, ctx, table, version):
    # A module function, not a closure in resolve(): a recursive closure is
    # a reference cycle (function -> its cell -> function) holding the
    # context, left for the cyclic collector at every resolve.
    if isinstance(node, Mapping):
        if len(node) == 1:
            call = _call(node, table, version, node_path)
            if call is not None:
                name, args, handler = call
                fn_path = f"{node_path}.{name}" if node_path else name
                if handler.lazy:
                    return handler.impl(args, ctx, fn_path)
                args = _walk(args, fn_path, ctx, table, version)
                if contains_unresolved(args):
                    return UNRESOLVED
                return handler.impl(args, ctx, fn_path)
        result = {}
        for key, value in node.items():
            value = _walk(value, f"{node_path}.{key}" if node_path else str(key),
                          ctx, table, version)
            if value is not OMIT:
                result[key] = value
        return result
    if isinstance(node, list):
        result = []
        for i, item in enumerate(node):
            item = _walk(item, f"{node_path}[{i}]", ctx, table, version)
            if item is not OMIT:
                result.append(item)
        return result
    return node


def expand_conditions(snippet, ctx, path=""):
    """Replace every ``if`` whose condition is known by the branch it picks.

    This is Heat's treatment of ``if`` as a macro: the branch not taken is
    not part of the template, so a reference inside it to a resource whose
    condition is false is no dependency and no error. An ``if`` whose
    condition is UNRESOLVED (a child template validated before its parameters
    are known) is left in place.
    """
    table = ctx.table
    call = _call(snippet, table, ctx.version, path)
    if call is not None:
        name, args, handler = call
        fn_path = join_path(path, name)
        chosen = getattr(handler, "choose", None)
        if chosen is None:
            return {name: expand_conditions(args, ctx, fn_path)}
        branch = chosen(args, ctx, fn_path)
        if branch is not UNRESOLVED:
            return branch if branch is OMIT else expand_conditions(branch, ctx, path)
        # Kept for later: the condition stays as written, the values expand.
        return {name: [args[0], *(expand_conditions(value, ctx, index_path(fn_path, i))
                                  for i, value in enumerate(args[1:], start=1))]}
    if isinstance(snippet, Mapping):
        result = {}
        for key, value in snippet.items():
            value = expand_conditions(value, ctx, join_path(path, key))
            if value is not OMIT:
                result[key] = value
        return result
    if isinstance(snippet, list):
        items = (expand_conditions(v, ctx, index_path(path, i)) for i, v in enumerate(snippet))
        return [item for item in items if item is not OMIT]
    return snippet


def check_functions(snippet, ctx, path=""):
    """Refuse function names ``ctx``'s version does not accept, and arguments
    of a shape Heat refuses when it parses them (:mod:`.shapes`), without
    resolving anything.

    The first argument of ``if`` is checked as a condition.
    """
    from nestedflow.template.functions import shapes

    pending = [(snippet, path, ctx)]
    while pending:
        node, node_path, node_ctx = pending.pop()
        call = _call(node, node_ctx.table, node_ctx.version, node_path)
        if call is not None:
            name, args, handler = call
            fn_path = join_path(node_path, name)
            shapes.check(handler, args, node_ctx.table, fn_path)
            if getattr(handler, "choose", None) is not None and isinstance(args, list) and args:
                pending.append((args[0], index_path(fn_path, 0), node_ctx.for_condition()))
                values = node_ctx.for_values()
                pending.extend((arg, index_path(fn_path, i), values)
                               for i, arg in enumerate(args[1:], start=1))
            else:
                pending.append((args, fn_path, node_ctx))
        elif isinstance(node, Mapping):
            pending.extend((value, join_path(node_path, key), node_ctx)
                           for key, value in node.items())
        elif isinstance(node, list):
            pending.extend((item, index_path(node_path, i), node_ctx)
                           for i, item in enumerate(node))


def _calls(snippet, path=""):
    """Every call of a reference function in ``snippet`` as ``(name, args, path)``."""
    # Iterative walk: snippets can be arbitrarily deep. Names are matched
    # without the version table: get_resource / get_attr exist in every
    # version, and version errors are raised when the snippet is resolved.
    # A node's path is kept as (parent, key) links and spelled out only for
    # a call found: building every node's path string was most of the walk
    # (templates are walked several times per stack), and scalars, most of
    # the nodes, are never queued.
    pending = [(snippet, None)]
    while pending:
        node, trail = pending.pop()
        if isinstance(node, Mapping):
            if len(node) == 1:
                ((name, args),) = node.items()
                if name in versions.REFERENCE_FUNCTIONS:
                    yield name, args, _spelled(path, trail)
                    if isinstance(args, (Mapping, list)):
                        pending.append((args, (trail, name, False)))
                    continue
            pending.extend((value, (trail, key, False))
                           for key, value in reversed(list(node.items()))
                           if isinstance(value, (Mapping, list)))
        elif isinstance(node, list):
            pending.extend((item, (trail, i, True)) for i, item in reversed(list(enumerate(node)))
                           if isinstance(item, (Mapping, list)))


def _spelled(path, trail):
    """The path of a node :func:`_calls` reached by ``trail`` from ``path``."""
    steps = []
    while trail is not None:
        trail, key, is_index = trail
        steps.append((key, is_index))
    for key, is_index in reversed(steps):
        path = index_path(path, key) if is_index else join_path(path, key)
    return path


def find_references(snippet, path=""):
    """Return every get_resource / get_attr call in ``snippet`` as a :class:`Reference`,
    in document order. Calls whose resource name is computed are skipped.

    ``Ref`` (2013-05-23) names a resource or a parameter: it is reported with
    kind ``Ref`` and callers ignore it when no resource has that name.
    """
    found = []
    for name, args, node_path in _calls(snippet, path):
        if name in ("get_resource", "Ref") and isinstance(args, str):
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
    None where the call computes it, or reads every attribute (so that any
    resource, or any attribute of the resource, may be read)."""
    reads = set()
    for name, args, _ in _calls(snippet):
        if name == "get_attr" and isinstance(args, list) and args:
            resource = args[0] if isinstance(args[0], str) else None
            attr = args[1] if len(args) > 1 and isinstance(args[1], str) else None
            reads.add((resource, attr))
    return reads
