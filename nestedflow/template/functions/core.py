"""Functions that read the stack: get_param, get_resource, get_attr, get_file,
resource_facade, and the CFN ``Ref`` / ``Fn::GetAZs`` / ``Fn::ResourceFacade``
that 2013-05-23 accepts (heat/engine/hot/functions.py, heat/engine/cfn/functions.py).
"""

from nestedflow.properties.schema import UNRESOLVED
from nestedflow.template.functions.base import Function, fail, is_sequence, step

#: ``resource_facade`` in a stack that is no resource's child.
NO_PARENT = object()


def _get_param(args, ctx, path):
    if isinstance(args, str):
        name, keys = args, []
    elif is_sequence(args) and args:
        name, keys = args[0], list(args[1:])
    else:
        raise fail(f"expects a parameter name or [name, key, ...], got {args!r}", path)
    if not isinstance(name, str):
        raise fail(f"parameter name must be a string, got {name!r}", path)
    if name not in ctx.parameters:
        raise fail(f"unknown parameter {name!r}", path)
    value = ctx.parameters[name]
    if value is UNRESOLVED:
        return UNRESOLVED
    for key in keys:
        try:
            value = step(value, key)
        except (LookupError, TypeError):
            # Heat's GetParam answers "" for any path it cannot follow.
            return ""
    return value


def _get_resource(args, ctx, path):
    if not isinstance(args, str):
        raise fail(f"expects a resource name, got {args!r}", path)
    if ctx.get_resource is None:
        raise fail("get_resource is not available here", path)
    return ctx.get_resource(args)


def _check_path(keys, path):
    for key in keys:
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise fail(f"path items must be strings or integers, got {key!r}", path)


def _read_attr(ctx, name, attr, keys, path):
    if ctx.get_attr is None:
        raise fail("get_attr is not available here", path)
    return ctx.get_attr(name, attr, keys)


def _get_attr(args, ctx, path):
    # 2013-05-23 .. 2015-04-30: [resource, attribute, key...].
    if not is_sequence(args) or len(args) < 2:
        raise fail(f"expects [resource, attribute, key...], got {args!r}", path)
    name, attr, *rest = args
    if not isinstance(name, str) or not isinstance(attr, str):
        raise fail(f"resource and attribute names must be strings, got {args!r}", path)
    _check_path(rest, path)
    return _read_attr(ctx, name, attr, list(rest), path)


def _get_attr_all(args, ctx, path):
    # 2015-10-15 on: [resource] alone reads every attribute as a map
    # (Heat's GetAttAllAttributes).
    if is_sequence(args) and len(args) == 1:
        if not isinstance(args[0], str):
            raise fail(f"resource name must be a string, got {args[0]!r}", path)
        return _read_attr(ctx, args[0], None, [], path)
    if not is_sequence(args) or not args:
        raise fail(f"expects [resource] or [resource, attribute, key...], got {args!r}", path)
    return _get_attr(args, ctx, path)


def _get_file(args, ctx, path):
    if not isinstance(args, str):
        raise fail(f"expects a file name, got {args!r}", path)
    files = ctx.files or {}
    if args not in files:
        raise fail(f"no content in the files map for {args!r}", path)
    return files[args]


def _facade(ctx, key, path):
    if ctx.facade is None:
        return UNRESOLVED  # validation: the parent resource is not known yet
    if ctx.facade is NO_PARENT:
        raise fail("only a nested stack has a parent resource to read", path)
    return ctx.facade.get(key)


_FACADE_KEYS = ("metadata", "deletion_policy", "update_policy")


def check_facade_key(args, path):
    if not isinstance(args, str) or args not in _FACADE_KEYS:
        raise fail(f"expects one of {', '.join(_FACADE_KEYS)}, got {args!r}", path)


def _resource_facade(args, ctx, path):
    check_facade_key(args, path)
    return _facade(ctx, args, path)


_CFN_FACADE_KEYS = {
    "Metadata": "metadata",
    "DeletionPolicy": "deletion_policy",
    "UpdatePolicy": "update_policy",
}


def _fn_resource_facade(args, ctx, path):
    if args not in _CFN_FACADE_KEYS:
        raise fail(f"expects one of {', '.join(_CFN_FACADE_KEYS)}, got {args!r}", path)
    return _facade(ctx, _CFN_FACADE_KEYS[args], path)


def _ref(args, ctx, path):
    # Heat's cfn Ref: a parameter reference or a resource reference.
    if not isinstance(args, str):
        raise fail(f"expects a parameter or resource name, got {args!r}", path)
    if args in ctx.parameters:
        return _get_param(args, ctx, path)
    return _get_resource(args, ctx, path)


def _get_azs(args, ctx, path):
    # What Heat answers without a cloud to ask (cfn GetAZs with no stack).
    return ["nova"]


def facade_of(definition):
    """The ``resource_facade`` view of a parent resource definition."""
    return {
        "metadata": dict(definition.metadata),
        "deletion_policy": definition.deletion_policy,
        "update_policy": dict(definition.update_policy),
    }


get_param = Function(_get_param)
get_resource = Function(_get_resource)
get_attr = Function(_get_attr)
get_attr_all = Function(_get_attr_all)
get_file = Function(_get_file)
resource_facade = Function(_resource_facade)
fn_resource_facade = Function(_fn_resource_facade)
ref = Function(_ref)
get_azs = Function(_get_azs)
