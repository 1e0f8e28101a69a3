"""``stack resource list|show`` (and the older ``stack resources``)."""


from nestedflow.cmd.commands import bases, columns, listing, tables

LIST_COLUMNS = ("name", "physical_id", "type", "action", "status", "status_reason",
                "updated_at")
#: The table's columns without --long (heatclient's choice; fits 80 columns).
SHORT = ("name", "physical_id", "type", "action", "status")
SHOW_FIELDS = ("name", "type", "physical_id", "action", "status", "status_reason",
               "stack_id", "stack_name", "updated_at", "properties")


def add_nested_depth(parser):
    parser.add_argument("-n", "--nested-depth", type=int, default=0, metavar="<nested-depth>",
                        help="depth of nested stacks to include (default: 0)")


class ListResource(tables.Lister):
    """List a stack's resources."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
        add_nested_depth(parser)
        tables.add_long_argument(parser, "the status reason and update time")
        listing.add_arguments(parser, LIST_COLUMNS)
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        found = self.app.engine.list_resources(stack.id, nested_depth=parsed_args.nested_depth)
        found = listing.select(found, parsed_args, "name")
        names = tables.pick_columns(parsed_args, LIST_COLUMNS, SHORT)
        return names, [columns.row(r, names) for r in found]


class ShowResource(bases.ShowOne):
    """Show one resource of a stack."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
        parser.add_argument("resource", metavar="<resource>", help="name of the resource")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions

        stack = self.app.find_stack(parsed_args.stack)
        for resource in self.app.engine.list_resources(stack.id):
            if resource.name == parsed_args.resource:
                values = {f: columns.cell(getattr(resource, f, None)) for f in SHOW_FIELDS}
                values["stack_name"] = getattr(resource, "stack_name", None) or stack.name
                return SHOW_FIELDS, tuple(values[f] for f in SHOW_FIELDS)
        raise exceptions.ResourceNotFound(stack.name, parsed_args.resource)
