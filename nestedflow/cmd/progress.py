"""Waiting for a stack to settle, with or without a live progress display.

The display polls ``get_stack`` / ``list_resources`` rather than relying on
notifications so it works the same whether the traversal runs in this
process's threads or on a conductor elsewhere. The display itself is
:mod:`nestedflow.cmd.progress_bar` (rich: 0.06 s of CPU to import, which a
command waiting quietly -- piped, or -f json -- does not pay).
"""

import time

from nestedflow import exceptions, states

POLL_INTERVAL = 0.2
IN_PROGRESS = states.IN_PROGRESS
SETTLED = (states.COMPLETE, states.FAILED)
# How many in-progress resource names the status line lists before "+N more".
_MAX_NAMES = 8


def count_settled(resources, action):
    """(settled, total, names in progress) for the stack's current ``action``.

    A resource is settled once it is COMPLETE or FAILED for the action the
    stack is running; a resource still showing the previous action's
    COMPLETE has not been touched yet by this one.
    """
    resources = list(resources)
    settled = sum(1 for r in resources if r.action == action and r.status in SETTLED)
    running = sorted(r.name for r in resources if r.status == IN_PROGRESS)
    return settled, len(resources), running


def latest_checks(engine, stack_id):
    # An RPC client of an older engine has no list_checks: no check line.
    list_checks = getattr(engine, "list_checks", None)
    if list_checks is None:
        return []
    try:
        return list_checks(stack_id, latest=True)
    except exceptions.StackNotFound:
        return []


def checks_line(results):
    """What the resources' checks say so far: counts, and the failed ones named."""
    if not results:
        return ""
    failed = [r for r in results if r.status == "FAIL"]
    line = f"checks: {len(results) - len(failed)} passed"
    if failed:
        named = ", ".join(f"{r.resource_name} {r.check!r}" for r in failed[:3])
        more = f" (+{len(failed) - 3} more)" if len(failed) > 3 else ""
        line += f", {len(failed)} failed: {named}{more}"
    return line


def in_progress_line(names):
    if not names:
        return ""
    shown = ", ".join(names[:_MAX_NAMES])
    extra = len(names) - _MAX_NAMES
    if extra > 0:
        shown += f" (+{extra} more)"
    return f"in progress: {shown}"


def _get(engine, stack_id, last):
    try:
        return engine.get_stack(stack_id)
    except exceptions.StackNotFound:
        # A backend that purges deleted stacks: gone is as settled as
        # DELETE_COMPLETE. Anything else vanishing mid-wait is an error.
        if last is not None and last.action == states.DELETE:
            return None
        raise


def poll(engine, stack_id, on_update=None, interval=None, sleep=time.sleep):
    """Poll until the stack is no longer IN_PROGRESS; returns the last Stack.

    Returns None when a stack being deleted disappeared altogether.
    ``on_update(stack, resources)`` is called after every poll.
    """
    if interval is None:
        interval = POLL_INTERVAL
    stack = None
    while True:
        stack = _get(engine, stack_id, stack)
        if stack is None:
            return None
        if on_update is not None:
            try:
                resources = engine.list_resources(stack.id)
            except exceptions.StackNotFound:
                resources = []
            on_update(stack, resources)
        if stack.status != IN_PROGRESS:
            return stack
        sleep(interval)


def wait_quietly(engine, stack_id):
    """Block in the engine until the stack settles; returns the final Stack."""
    try:
        return engine.wait(stack_id)
    except exceptions.StackNotFound:
        return None


def __getattr__(name):
    # The display's names, where callers have always found them.
    if name in ("StackProgress", "make_console", "wait_with_progress"):
        from nestedflow.cmd import progress_bar

        return getattr(progress_bar, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
