"""``stack checks``: the results of the Fuel-style pre- and post-checks
(``stack rerun --checks-only`` runs them again: :mod:`.reruns`)."""
from nestedflow.cmd.commands import columns, listing, resources, tables

CHECK_FIELDS = ("timestamp", "resource_name", "action", "phase", "check", "type", "status",
                "message", "duration", "attempts", "traversal_id")
#: The table's columns without --long: what fits 80 columns.
CHECK_SHORT = ("resource_name", "action", "phase", "check", "status", "message")


class StackChecks(tables.Lister):
    """List the results of a stack's resource pre- and post-checks, oldest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
        parser.add_argument("--latest", action="store_true",
                            help="only the last result of each check")
        resources.add_nested_depth(parser)
        tables.add_long_argument(parser, "when, the check type, duration, attempts "
                                 "and traversal")
        listing.add_arguments(parser, CHECK_FIELDS)
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        found = self.app.engine.list_checks(stack.id, nested_depth=parsed_args.nested_depth,
                                            latest=parsed_args.latest)
        found = listing.select(found, parsed_args, "timestamp")
        names = tables.pick_columns(parsed_args, CHECK_FIELDS, CHECK_SHORT)
        return names, [columns.row(c, names) for c in found]
