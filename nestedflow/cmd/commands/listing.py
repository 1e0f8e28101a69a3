"""heatclient's list options: ``--filter``, ``--sort``, ``--marker``, ``--limit``.

Applied here to what the engine returned (its list methods return every
row); the semantics are Heat's: several ``--filter`` values of one key
match any of them, keys must all match; ``--sort key[:asc|desc]``
(comma-separated keys); ``--marker`` starts after the row with that id in
the sorted order; ``--limit`` caps the rows.
"""

import datetime


def add_arguments(parser, fields):
    names = ", ".join(fields)
    parser.add_argument(
        "--filter", "--property", dest="filters", action="append", default=[],
        metavar="<key=value>",
        help=f"only rows whose field has this value; may be repeated (fields: {names})")
    parser.add_argument("--sort", metavar="<key>[:<direction>]",
                        help="sort by these comma-separated keys, each :asc (default) "
                        "or :desc")
    parser.add_argument("--marker", metavar="<id>",
                        help="only rows after the one with this id (in the sorted order)")
    parser.add_argument("--limit", type=int, metavar="<limit>",
                        help="at most this many rows")


def _filters(items):
    from nestedflow.cmd.errors import CommandError

    wanted = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"invalid filter {item!r}: expected KEY=VALUE")
        wanted.setdefault(key.strip(), set()).add(value)
    return wanted


def _text(value):
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return str(value)


def _field(rows, key):
    # heatclient's keys (stack_status, resource_name...) name view fields too.
    from nestedflow.cmd.commands import heat_columns

    if rows and not hasattr(rows[0], key):
        return heat_columns.KEYS.get(key, key)
    return key


def select(rows, parsed_args, id_field):
    """``rows`` (views) filtered, sorted, after the marker and limited."""
    from nestedflow.cmd.errors import CommandError

    rows = list(rows)
    for key, values in _filters(parsed_args.filters).items():
        key = _field(rows, key)
        if rows and not hasattr(rows[0], key):
            raise CommandError(f"cannot filter on {key!r}: no such field")
        rows = [r for r in rows if _text(getattr(r, key)) in values]
    if parsed_args.sort:
        # Stable sorts, last key first: the first key decides.
        for spec in reversed(parsed_args.sort.split(",")):
            key, _, direction = spec.strip().partition(":")
            key = _field(rows, key)
            if direction not in ("", "asc", "desc"):
                raise CommandError(f"invalid sort direction {direction!r}: asc or desc")
            if rows and not hasattr(rows[0], key):
                raise CommandError(f"cannot sort on {key!r}: no such field")
            rows.sort(key=lambda r: _text(getattr(r, key)), reverse=direction == "desc")
    if parsed_args.marker:
        ids = [_text(getattr(r, id_field)) for r in rows]
        if parsed_args.marker not in ids:
            raise CommandError(f"marker {parsed_args.marker} not found")
        rows = rows[ids.index(parsed_args.marker) + 1:]
    if parsed_args.limit is not None:
        if parsed_args.limit < 0:
            raise CommandError("--limit must not be negative")
        rows = rows[:parsed_args.limit]
    return rows
