"""Rendering of stacks, resources, events and outputs for the command line.

Two formats: ``table`` (rich tables, coloured only on a terminal) and
``json`` (plain ``json.dumps`` of the objects' ``to_dict()``, nothing else on
stdout so the output can be piped into ``jq``).

Every cell is wrapped in :class:`rich.text.Text`: status reasons and outputs
are user data and may contain ``[...]``, which rich would otherwise read as
markup.
"""

import datetime
import json
import os
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

FORMATS = ("table", "json")

# When stdout is not a terminal rich assumes 80 columns and would wrap
# 36-character ids across lines; piped tables are easier to read (and grep)
# one row per line.
_PIPE_WIDTH = 200


def make_console(stream=None, *, stderr=False):
    """A console for ``stream`` (stdout by default) sized for pipes too."""
    if stream is None:
        stream = sys.stderr if stderr else sys.stdout
    width = None
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()) and "COLUMNS" not in os.environ:
        width = _PIPE_WIDTH
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)


def status_style(status):
    if status == "COMPLETE":
        return "green"
    if status == "FAILED":
        return "bold red"
    if status == "IN_PROGRESS":
        return "yellow"
    return ""


def format_value(value):
    """A cell's text: timestamps without microseconds, structures as JSON."""
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, indent=2, sort_keys=True, default=str)
    return str(value)


def _cell(value, style=""):
    return Text(format_value(value), style=style)


def _state_cells(obj):
    style = status_style(getattr(obj, "status", None))
    return _cell(getattr(obj, "action", None), style), _cell(getattr(obj, "status", None), style)


def _to_dict(obj):
    to_dict = getattr(obj, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    return dict(obj)


def dumps(data):
    return json.dumps(data, indent=2, default=str)


class Renderer:
    """Writes one command's result in the chosen format to ``stream``."""

    def __init__(self, fmt="table", stream=None):
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.format = fmt
        self.stream = stream if stream is not None else sys.stdout
        self._console = None

    @property
    def console(self):
        if self._console is None:
            self._console = make_console(self.stream)
        return self._console

    @property
    def is_json(self):
        return self.format == "json"

    def data(self, data):
        self.stream.write(dumps(data) + "\n")
        self.stream.flush()

    def message(self, text):
        """A human sentence; JSON output carries data only, so it goes nowhere."""
        if not self.is_json:
            self.stream.write(text + "\n")
            self.stream.flush()

    # -- stacks -----------------------------------------------------------

    def stack(self, stack):
        if self.is_json:
            return self.data(_to_dict(stack))
        table = Table(show_header=True, header_style="bold")
        table.add_column("Field", no_wrap=True)
        table.add_column("Value", overflow="fold")
        style = status_style(stack.status)
        rows = [
            ("id", _cell(stack.id)),
            ("name", _cell(stack.name)),
            ("action", _cell(stack.action, style)),
            ("status", _cell(stack.status, style)),
            ("status_reason", _cell(stack.status_reason)),
            ("parent_id", _cell(getattr(stack, "parent_id", None))),
            ("disable_rollback", _cell(getattr(stack, "disable_rollback", None))),
            ("created_at", _cell(getattr(stack, "created_at", None))),
            ("updated_at", _cell(getattr(stack, "updated_at", None))),
            ("outputs", _cell(getattr(stack, "outputs", None) or {})),
        ]
        for field, value in rows:
            table.add_row(Text(field), value)
        self.console.print(table)

    def stack_list(self, stacks):
        stacks = list(stacks)
        if self.is_json:
            return self.data([_to_dict(s) for s in stacks])
        table = Table(show_header=True, header_style="bold")
        table.add_column("ID", no_wrap=True)
        table.add_column("Name")
        table.add_column("Action", no_wrap=True)
        table.add_column("Status", no_wrap=True)
        table.add_column("Updated", no_wrap=True)
        for s in stacks:
            updated = getattr(s, "updated_at", None) or getattr(s, "created_at", None)
            table.add_row(_cell(s.id), _cell(s.name), *_state_cells(s), _cell(updated))
        self.console.print(table)

    # -- resources, events, outputs -----------------------------------------

    def resources(self, resources, nested=False):
        resources = list(resources)
        if self.is_json:
            return self.data([_to_dict(r) for r in resources])
        table = Table(show_header=True, header_style="bold")
        if nested:
            table.add_column("Stack", no_wrap=True)
        table.add_column("Name", no_wrap=True)
        table.add_column("Type", no_wrap=True)
        table.add_column("Physical ID", no_wrap=True)
        table.add_column("Action", no_wrap=True)
        table.add_column("Status", no_wrap=True)
        table.add_column("Status Reason", overflow="fold")
        for r in resources:
            table.add_row(
                *([_cell(getattr(r, "stack_name", None))] if nested else []),
                _cell(r.name),
                _cell(r.type),
                _cell(r.physical_id),
                *_state_cells(r),
                _cell(r.status_reason),
            )
        self.console.print(table)

    def events(self, events, nested=False):
        events = list(events)
        if self.is_json:
            return self.data([_to_dict(e) for e in events])
        table = Table(show_header=True, header_style="bold")
        table.add_column("Timestamp", no_wrap=True)
        if nested:
            table.add_column("Stack", no_wrap=True)
        table.add_column("Resource", no_wrap=True)
        table.add_column("Action", no_wrap=True)
        table.add_column("Status", no_wrap=True)
        table.add_column("Reason", overflow="fold")
        # Who ran the action: the embedded engine or the conductor's name.
        table.add_column("Engine", no_wrap=True)
        for e in events:
            table.add_row(
                _cell(e.timestamp),
                *([_cell(getattr(e, "stack_name", None))] if nested else []),
                _cell(e.resource_name),
                *_state_cells(e),
                _cell(e.status_reason),
                _cell(getattr(e, "engine_id", None)),
            )
        self.console.print(table)

    def outputs(self, outputs):
        outputs = dict(outputs or {})
        if self.is_json:
            return self.data(outputs)
        table = Table(show_header=True, header_style="bold")
        table.add_column("Key", no_wrap=True)
        table.add_column("Value", overflow="fold")
        for key in sorted(outputs):
            table.add_row(_cell(key), _cell(outputs[key]))
        self.console.print(table)

    # -- conductors -----------------------------------------------------------

    def conductors(self, listing):
        """``listing``: {"conductors": [...], "unclaimed": [...]} (see
        nestedflow.conductor.listing)."""
        if self.is_json:
            return self.data(listing)
        table = Table(show_header=True, header_style="bold")
        table.add_column("Conductor", no_wrap=True)
        table.add_column("Host", no_wrap=True)
        table.add_column("PID", no_wrap=True)
        table.add_column("Up Since", no_wrap=True)
        table.add_column("Slots", no_wrap=True)
        table.add_column("Jobs Held", overflow="fold")
        for c in listing["conductors"]:
            jobs = "\n".join(f"{j['action']} {j['stack_id']} (attempt {j['attempts']})"
                             for j in c["jobs"]) or "-"
            table.add_row(_cell(c["name"]), _cell(c.get("host")), _cell(c.get("pid")),
                          _cell(c.get("started_at")), _cell(c.get("job_slots")), _cell(jobs))
        self.console.print(table)
        unclaimed = listing.get("unclaimed") or []
        orphaned = listing.get("orphaned") or []
        self.stream.write(f"{len(unclaimed)} unclaimed job(s)"
                          + (f", {len(orphaned)} held by no live conductor" if orphaned else "")
                          + "\n")
        self.stream.flush()
