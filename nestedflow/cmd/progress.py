"""Waiting for a stack to settle, with or without a live progress display.

The display polls ``get_stack`` / ``list_resources`` rather than relying on
notifications so it works the same whether the traversal runs in this
process's threads or on a conductor elsewhere.
"""

import os
import sys
import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from nestedflow import exceptions, states

# When the stream is not a terminal rich assumes 80 columns and would wrap
# 36-character ids across lines; piped output is easier to read one row per line.
_PIPE_WIDTH = 200

POLL_INTERVAL = 0.2
IN_PROGRESS = states.IN_PROGRESS
SETTLED = (states.COMPLETE, states.FAILED)
# How many in-progress resource names the status line lists before "+N more".
_MAX_NAMES = 8


def make_console(stream=None):
    """A rich console for ``stream`` (stderr by default) sized for pipes too."""
    if stream is None:
        stream = sys.stderr
    width = None
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()) and "COLUMNS" not in os.environ:
        width = _PIPE_WIDTH
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


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


def _latest_checks(engine, stack_id):
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


class StackProgress(Progress):
    """A progress bar followed by a line naming the resources in progress."""

    # Class attribute: Progress.__init__ already renders once.
    status_line = ""

    def get_renderables(self):
        yield self.make_tasks_table(self.tasks)
        if self.status_line:
            yield Text(self.status_line, style="dim", overflow="ellipsis", no_wrap=True)


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


def wait_with_progress(engine, stack_id, console=None, interval=None, sleep=time.sleep):
    """Show a live bar on ``console`` (stderr) while waiting; returns the final Stack."""
    if console is None:
        console = Console(stderr=True)
    display = StackProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[state]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
        refresh_per_second=10,
    )
    task = display.add_task("stack", total=None, state="")

    def on_update(stack, resources):
        # An adopt's resources are created, a restore's updated.
        runs_as = states.RUNS_AS.get(stack.action, stack.action)
        settled, total, running = count_settled(resources, runs_as)
        display.update(
            task,
            description=f"stack {stack.name}",
            completed=settled,
            total=total or None,
            state=f"{stack.action}_{stack.status}",
        )
        lines = [in_progress_line(running), checks_line(_latest_checks(engine, stack.id))]
        display.status_line = "; ".join(line for line in lines if line)

    with display:
        final = poll(engine, stack_id, on_update=on_update, interval=interval, sleep=sleep)
        display.status_line = ""
        display.refresh()
    return final


def wait_quietly(engine, stack_id):
    """Block in the engine until the stack settles; returns the final Stack."""
    try:
        return engine.wait(stack_id)
    except exceptions.StackNotFound:
        return None
