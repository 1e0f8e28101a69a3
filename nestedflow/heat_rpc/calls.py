"""What every group of Heat RPC methods shares: the Engine, the request
context's tenancy, finding a stack from Heat's identity, turning errors
into Heat's."""

import copy
import functools
import logging

from nestedflow import exceptions
from nestedflow.heat_rpc import faults

LOG = logging.getLogger(__name__)


def rpc(method):
    """An RPC method: nestedflow's errors leave as Heat's (see :mod:`faults`)."""

    @functools.wraps(method)
    def call(self, ctxt, **kwargs):
        try:
            return method(self, ctxt, **kwargs)
        except exceptions.NestedflowError as error:
            stack = None
            if isinstance(error, exceptions.ActionNotAllowed):
                stack = self._stack_or_none(ctxt, kwargs.get("stack_identity"))
            translated = faults.translate(error, stack)
            if translated is None:
                raise
            if translated is not error:
                LOG.debug("%s: %s answered as %s", method.__name__, error,
                          type(translated).__name__)
            raise translated from None

    call.heat_rpc = True
    return call


def project_scoped(ctxt):
    """The context as one that sees only its project's stacks.

    heat-api's noauth contexts are all admin; Heat scopes finding a stack by
    name, and nestedflow also listing, to the caller's project (an admin
    context without a project -- heat-api's ``global_tenant`` listing --
    sees all)."""
    if ctxt is None or not ctxt.is_admin or not ctxt.project_id:
        return ctxt
    scoped = copy.copy(ctxt)
    scoped.is_admin = False
    return scoped


class Calls:
    """Base of the method groups: ``engine`` is a :class:`nestedflow.Engine`
    (or anything with its public methods)."""

    def __init__(self, engine, conf):
        self.engine = engine
        self.conf = conf

    def _stack(self, ctxt, stack_identity):
        """The stack view Heat's identity names, as heat-engine's
        ``_get_stack`` finds it: by id (an admin context sees every
        project's), and only if the name matches too."""
        stack_identity = stack_identity or {}
        stack_id = stack_identity.get("stack_id")
        name = stack_identity.get("stack_name")
        if not stack_id:
            raise faults.stack_not_found(name)
        try:
            stack = self.engine.get_stack(stack_id, context=ctxt)
        except exceptions.StackNotFound:
            raise faults.stack_not_found(name) from None
        if stack.id != stack_id or stack.name != name or stack_identity.get("path"):
            raise faults.stack_not_found(name)
        return stack

    def _stack_or_none(self, ctxt, stack_identity):
        if not stack_identity:
            return None
        try:
            return self._stack(ctxt, stack_identity)
        except exceptions.NestedflowError:
            return None
