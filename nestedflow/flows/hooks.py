"""Breakpoints (Heat's hooks): a resource action that pauses until cleared.

As Heat's ``Resource._break_if_required`` (heat/engine/resource.py): when
the stack's environment sets ``hook`` on the resource (its registry's
``resources`` section, wildcards and nested stacks' entries included:
:func:`nestedflow.template.environment.matches_hook`), the action records
"<ACTION> paused until Hook <hook> is cleared" and waits until the
resource is signalled ``{"unset_hook": hook}`` (:mod:`nestedflow.engine.
signals`), which records "Hook <hook> is cleared". A failure while waiting
(a cancel, a timeout) clears the hook and records "Failure occurred while
waiting.", as Heat does.

The hook reached is a row of its own (:mod:`nestedflow.db.signals`), one
per resource row, hook and traversal: an action re-run after a crash finds
it and waits only if it is still pending. The wait blocks on the signal's
announcement (:class:`nestedflow.stacks.signals.SignalBox`), not a poll.
"""

import contextlib
import logging

from nestedflow import exceptions
from nestedflow.stacks.signals import SignalBox
from nestedflow.template import environment

LOG = logging.getLogger(__name__)


def _registry(scope):
    template = scope.db.get_template(scope.stack.raw_template_id)
    return (template.environment or {}).get(environment.RESOURCE_REGISTRY) or {}


def has_hooks(scope, resource_name):
    """Does the environment set any hook on the resource?"""
    registry = _registry(scope)
    return any(environment.matches_hook(registry, resource_name, hook)
               for hook in environment.HOOK_TYPES)


def break_if_required(scope, row, action, hook):
    """Pause ``row``'s ``action`` while ``hook`` is set and not cleared."""
    if not environment.matches_hook(_registry(scope), row.name, hook):
        return
    db = scope.db
    reached, pending = db.reach_hook(row, hook, scope.traversal_id)
    if reached:
        # A run's write: fenced by its ownership (db.fencing.check_run).
        db.add_run_event(scope.stack.id, scope.traversal_id, scope.owner, row.name,
                         row.action, row.status,
                         f"{action} paused until Hook {hook} is cleared",
                         resource_id=row.id, physical_id=row.physical_id,
                         engine_id=scope.runtime.engine_id)
        LOG.info("Reached hook %s on %s", hook, row.name)
    if not pending:
        return
    box = SignalBox(db, scope.runtime.events, scope.stack.id, row,
                    stop_event=scope.wait_event(), still_owner=scope.check_owner,
                    waiting=scope.waiting)
    try:
        while not box.wait(row.name, lambda: not db.hook_pending(row.id, hook,
                                                                 scope.traversal_id),
                           timeout=scope.seconds_left()):
            scope.check_deadline()
            scope.check_owner()
    except Exception:
        db.clear_hook(scope.stack.id, row.name, hook)
        with contextlib.suppress(exceptions.OwnershipLost):  # the error raised wins
            db.add_run_event(scope.stack.id, scope.traversal_id, scope.owner, row.name,
                             row.action, row.status, "Failure occurred while waiting.",
                             resource_id=row.id, engine_id=scope.runtime.engine_id)
        raise
    # A stack timeout that passed while paused fails the action here.
    scope.check_deadline()



