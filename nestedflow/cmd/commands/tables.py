"""cliff's table, with the columns that name things kept whole.

cliff shrinks every wide column alike to fit ``--max-width`` or the
terminal, so at 80 columns a resource list wraps ``db_password`` into
``db_passw`` / ``ord``. Here name columns up to :data:`KEEP_WIDTH`
characters keep their full width and the other wide columns (ids,
reasons, types) share what is left. The listing commands use
:class:`Lister`, whose formatters come from the ``nestedflow.formatter.list``
entry points: this table plus cliff's own csv/json/value/yaml.
"""

from cliff.formatters import base as formatter_base
from cliff.formatters import table

from nestedflow import dependency_check
from nestedflow.cmd.commands import bases

#: The cliff versions the private name below was written for and tested
#: with (setup.cfg bounds the requirement to the same range).
SUPPORTED = "cliff>=4.0.0,<5"
#: (module, class or None for the module itself, name): cliff's private
#: helper that says whether a table is to be fitted, checked at import
#: (:mod:`nestedflow.dependency_check`).
NAMES = (("cliff.formatters.table", None, "_do_fit"),)

#: Columns holding a name an operator reads and types back.
NAME_COLUMNS = frozenset({"name", "resource_name", "stack_name", "output_key"})
#: Names longer than this are wrapped like any other value.
KEEP_WIDTH = 30


class TableFormatter(table.TableFormatter):

    def _assign_max_widths(self, table_, max_width, min_width=0, fit_width=False):
        if max_width <= 0:
            if not table._do_fit(fit_width):
                return
            from cliff import utils

            max_width = utils.terminal_width() or 0
            if not max_width:
                return
        lines = table_.get_string().splitlines()
        if not lines or len(lines[0]) <= max_width:
            return
        widths = self._field_widths(table_.field_names, lines[0])
        kept = {f: w for f, w in widths.items() if f in NAME_COLUMNS and w <= KEEP_WIDTH}
        rest = [f for f in table_.field_names if f not in kept]
        if not kept or not rest:
            return table.TableFormatter._assign_max_widths(table_, max_width, min_width,
                                                           fit_width)
        # What the kept columns leave, shared as cliff shares the whole width.
        usable = max(0, max_width - 1 - 3 * len(table_.field_names) - sum(kept.values()))
        optimal = usable // len(rest)
        shrink, remaining = self._build_shrink_fields(usable, optimal, widths, rest)
        if not shrink:
            return
        # A column is never narrower than its heading (prettytable does not
        # wrap headings): those floors first, then the rest shared equally.
        floors = {f: max(min_width, len(f)) for f in shrink}
        extra = max(0, remaining - sum(floors.values()))
        for i, field in enumerate(shrink):
            table_.max_width[field] = floors[field] + extra // len(shrink) + (
                extra % len(shrink) if i == len(shrink) - 1 else 0)


class Lister(bases.Lister):
    """cliff's Lister with :class:`TableFormatter` as its ``table``."""

    @property
    def formatter_namespace(self):
        return "nestedflow.formatter.list"


def add_long_argument(parser, what):
    parser.add_argument("--long", action="store_true",
                        help=f"also {what} (always in -f json, yaml and csv)")


def pick_columns(parsed_args, full, short):
    """``short`` in a table or value listing without ``--long`` (what fits 80
    columns); every column for formats read by programs. With
    ``--nested-depth``, rows of several stacks: each says its stack's name
    before its resource's (as heatclient's nested listings do)."""
    names = short if parsed_args.formatter in ("table", "value") and not parsed_args.long \
        else full
    if getattr(parsed_args, "nested_depth", 0) > 0:
        at = names.index("resource_name") if "resource_name" in names else 0
        names = names[:at] + ("stack_name",) + names[at:]
    return names


class LogFormatter(formatter_base.ListFormatter):
    """Events one per line, as heatclient prints them by default
    (heatclient/osc/v1/event.py ``LogFormatter`` and common/utils.py
    ``event_log_formatter``): ``TIME ID [RESOURCE]: ACTION_STATUS  REASON``.
    Rows need the columns ``event_time``, ``id``, ``resource_name``,
    ``resource_status`` and ``resource_status_reason``; with
    ``stack_name`` (nested depths) the resource is ``stack/resource``."""

    def add_argument_group(self, parser):
        pass

    def emit_list(self, column_names, data, stdout, parsed_args):
        at = {name: i for i, name in enumerate(column_names)}

        def text(row, name):
            if name not in at:
                return ""
            cell = row[at[name]]
            if hasattr(cell, "human_readable"):
                cell = cell.human_readable()  # times to the second, as Heat's API
            return "" if cell is None else str(cell)

        top = getattr(parsed_args, "top_stack_name", None)
        lines = []
        for row in data:
            name = text(row, "resource_name")
            stack = text(row, "stack_name")
            if stack and stack not in (name, top):
                name = f"{stack}/{name}"
            line = (f"{text(row, 'event_time').replace('T', ' ')} {text(row, 'id')} "
                    f"[{name}]: {text(row, 'resource_status')}  "
                    f"{text(row, 'resource_status_reason')}")
            engine = text(row, "engine_id")  # --long: who ran the action (nestedflow's)
            lines.append(f"{line}  (by {engine})" if engine else line)
        stdout.write("\n".join(lines))
        stdout.write("\n")


dependency_check.check(NAMES, SUPPORTED, "cliff")
