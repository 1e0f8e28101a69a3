#!/usr/bin/env python3
"""Rewrite the command reference in doc/source/cli.rst from the commands.

    .venv/bin/python tools/gen_cli_reference.py          # rewrite the file
    .venv/bin/python tools/gen_cli_reference.py --check  # exit 1 if stale

Two tables between BEGIN/END marker comments: every ``nestedflow`` command
(the ``nestedflow.cli`` entry points) with its summary and usage, read from
the cliff command classes themselves; and every command of
python-heatclient 5.3.0's OSC plugin (its ``openstack.orchestration.v1``
entry points, listed below) with the nestedflow command answering it, or
"not yet". tests/unit/test_cli_reference_doc.py fails when either is stale.
"""

import pathlib
import re
import sys
import textwrap
from importlib import metadata

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import doc_sections  # noqa: E402 - a sibling of this script, not a package

BEGIN = ".. BEGIN GENERATED: command reference (tools/gen_cli_reference.py)\n"
END = ".. END GENERATED: command reference\n"
DOC = pathlib.Path(__file__).resolve().parent.parent / "doc" / "source" / "cli.rst"

#: python-heatclient 5.3.0 setup.cfg, [entry_points] openstack.orchestration.v1.
HEATCLIENT = (
    "orchestration build info", "orchestration resource type list",
    "orchestration resource type show", "orchestration service list",
    "orchestration template function list", "orchestration template validate",
    "orchestration template version list", "software config create",
    "software config delete", "software config list", "software config show",
    "software deployment create", "software deployment delete", "software deployment list",
    "software deployment metadata show", "software deployment output show",
    "software deployment show", "stack abandon", "stack adopt", "stack cancel",
    "stack check", "stack create", "stack delete", "stack environment show",
    "stack event list", "stack event show", "stack export", "stack failures list",
    "stack file list", "stack hook clear", "stack hook poll", "stack list",
    "stack output list", "stack output show", "stack resource list",
    "stack resource mark unhealthy", "stack resource metadata", "stack resource show",
    "stack resource signal", "stack resume", "stack show", "stack snapshot create",
    "stack snapshot delete", "stack snapshot list", "stack snapshot restore",
    "stack snapshot show", "stack suspend", "stack template show", "stack update",
)


def commands():
    """``{command name: class}`` of the installed nestedflow.cli entry points."""
    found = {}
    for point in metadata.entry_points(group="nestedflow.cli"):
        found[point.name.replace("_", " ")] = point.load()
    return dict(sorted(found.items()))


def _summary(cls):
    return (cls.__doc__ or "").strip().splitlines()[0].rstrip(".")


#: cliff's output options, the same on every list or show command (cli.rst
#: describes them once): left out of each usage line.
_OUTPUT_OPTIONS = re.compile(
    r" \[(-h|-f \{[^}]*\}|-c COLUMN|--quote \{[^}]*\}|--noindent|--max-width <integer>|"
    r"--fit-width|--print-empty|--prefix PREFIX|--sort-column SORT_COLUMN|"
    r"--sort-ascending \| --sort-descending)\]")


def _usage(name, cls):
    parser = cls(None, None).get_parser(f"nestedflow {name}")
    usage = " ".join(parser.format_usage().split())
    return _OUTPUT_OPTIONS.sub("", usage.removeprefix("usage: "))


def _table(header, rows):
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    def line(cells):
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    lines = [rule, line(header), rule] + [line(row) for row in rows]
    return "\n".join(lines + [rule, ""])


def reference():
    found = commands()
    parts = ["Every command (``nestedflow COMMAND --help`` says more):", ""]
    for name, cls in found.items():
        parts.append(f"``{name}``")
        parts.append(textwrap.indent(f"{_summary(cls)}.\n\n::\n\n    {_usage(name, cls)}\n",
                                     "    "))
    rows = [(f"``{name}``", f"``nestedflow {name}``" if name in found else "not yet")
            for name in HEATCLIENT]
    parts += ["heatclient's commands (python-heatclient 5.3.0) and nestedflow's:", "",
              _table(("``openstack ...``", "nestedflow"), rows)]
    return "\n".join(parts)


def render(text):
    return doc_sections.splice(text, BEGIN, END, reference())


if __name__ == "__main__":
    sys.exit(doc_sections.main(DOC, render, sys.argv[1:]))
