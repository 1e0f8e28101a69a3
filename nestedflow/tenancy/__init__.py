"""Request context and tenancy.

Every Engine (and RPC) method takes an optional ``context``, an
``oslo_context.context.RequestContext``:

* a stack belongs to the project (and user) of the context that created
  it; a nested stack to its parent's;
* a context that is not admin sees -- finds, lists, updates, deletes --
  only its own project's stacks: another project's stack is "not found",
  as in Heat, so its existence does not leak; an admin context sees all;
* stack names are unique per project;
* the context of the latest action on a stack is stored with it (without
  its tokens) so that whichever process runs the traversal hands it to
  plugins (``ActionContext.request_context``) and sends it with the
  notifications; the request id of each traversal is kept
  (``traversal_requests``) and shown on its events. Worker threads do not
  make it their current context: actions of several requests share them.

No context is the embedded default: the host itself, which sees every
stack and creates its stacks in one local project (``project_id`` None).
"""

import functools

from nestedflow import dependency_check, exceptions

#: The oslo.context versions :func:`restore` was written for and tested with
#: (setup.cfg bounds the requirement to the same range).
SUPPORTED = "oslo.context>=5.0.0,<7"
#: (module, class or None for the module itself, name) of every private
#: name of oslo.context used here, checked (:mod:`nestedflow.dependency_check`)
#: the first time :func:`restore` runs: not at import, which the command
#: line's reads do without loading oslo.context.
NAMES = (
    # The thread-local that holds the current context (restore).
    ("oslo_context.context", None, "_request_store"),
)

#: Keys of RequestContext.to_dict() never written to the database.
_SECRET_KEYS = ("auth_token", "auth_token_info", "service_token")


def is_scoped(context):
    """Does ``context`` see only its own project's stacks?"""
    return context is not None and not context.is_admin


def find(db, name_or_id, context):
    """The stack row ``name_or_id`` names, if ``context`` may see it
    (else :class:`exceptions.StackNotFound`, as for a stack that does not exist)."""
    if not is_scoped(context):
        return db.find_stack(name_or_id)
    row = db.find_stack(name_or_id, project_id=context.project_id, scoped=True)
    if row.project_id != context.project_id:
        raise exceptions.StackNotFound(name_or_id)
    return row


def owner_values(context, parent=None):
    """The tenancy columns of a new stack: its parent's, else the context's."""
    if parent is not None:
        return {"project_id": parent.project_id, "user_id": parent.user_id,
                "request_context": stored(context) if context is not None
                else parent.request_context}
    if context is None:
        return {"project_id": None, "user_id": None, "request_context": None}
    return {"project_id": context.project_id, "user_id": context.user_id,
            "request_context": stored(context)}


def context_values(context):
    """The stack columns an action under ``context`` writes: the request's
    context travels with the traversal (none without one)."""
    return {} if context is None else {"request_context": stored(context)}


def stored(context):
    """``context`` as written with the stack: its dict, without secrets."""
    if context is None:
        return None
    return {key: value for key, value in context.to_dict().items()
            if key not in _SECRET_KEYS}


def restore(stored_context, current=True):
    """The RequestContext a stored dict describes (None for none); with
    ``current``, made this thread's, so oslo.log's lines in this thread
    carry its request id."""
    if not stored_context:
        return None
    from oslo_context import context

    _check_oslo_context()
    restored = context.RequestContext.from_dict(stored_context, overwrite=current)
    if not current and context.get_current() is restored:
        # oslo.context makes a new context current where there was none,
        # even with overwrite=False; a worker thread shared by the actions
        # of several requests must not keep one (its later logs would name it).
        context._request_store.context = None
    return restored


@functools.cache
def _check_oslo_context():
    dependency_check.check(NAMES, SUPPORTED, "oslo.context")
