"""The live progress display of a stack being waited on (rich)."""

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

from nestedflow import states
from nestedflow.cmd.progress import (
    checks_line,
    count_settled,
    in_progress_line,
    latest_checks,
    poll,
)

# When the stream is not a terminal rich assumes 80 columns and would wrap
# 36-character ids across lines; piped output is easier to read one row per line.
_PIPE_WIDTH = 200


def make_console(stream=None):
    """A rich console for ``stream`` (stderr by default) sized for pipes too."""
    if stream is None:
        stream = sys.stderr
    width = None
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()) and "COLUMNS" not in os.environ:
        width = _PIPE_WIDTH
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


class StackProgress(Progress):
    """A progress bar followed by a line naming the resources in progress."""

    # Class attribute: Progress.__init__ already renders once.
    status_line = ""

    def get_renderables(self):
        yield self.make_tasks_table(self.tasks)
        if self.status_line:
            yield Text(self.status_line, style="dim", overflow="ellipsis", no_wrap=True)


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
        lines = [in_progress_line(running), checks_line(latest_checks(engine, stack.id))]
        display.status_line = "; ".join(line for line in lines if line)

    with display:
        final = poll(engine, stack_id, on_update=on_update, interval=interval, sleep=sleep)
        display.status_line = ""
        display.refresh()
    return final
