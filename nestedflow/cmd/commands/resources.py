"""``stack resource list|show`` (and the older ``stack resources``)."""


from nestedflow.cmd.commands import bases, listing, tables

LIST_COLUMNS = ("name", "physical_id", "type", "action", "status", "status_reason",
                "updated_at")
SHOW_FIELDS = ("name", "type", "physical_id", "action", "status", "status_reason",
               "stack_id", "stack_name", "updated_at", "properties")


def add_nested_depth(parser):
    parser.add_argument("-n", "--nested-depth", type=int, default=0, metavar="<nested-depth>",
                        help="depth of nested stacks to include (default: 0)")


#: heatclient's ``stack resource list`` columns (osc/v1/resource.py
#: ``ResourceList``); ``stack_name`` with --long or --nested-depth.
HEAT_LIST_COLUMNS = ("resource_name", "physical_resource_id", "resource_type",
                     "resource_status", "updated_time")
#: heatclient's ``stack resource show`` fields (Heat's format_stack_resource
#: keys that nestedflow has), then nestedflow's ``properties``.
HEAT_SHOW_FIELDS = ("resource_name", "logical_resource_id", "physical_resource_id",
                    "resource_type", "resource_status", "resource_status_reason",
                    "updated_time", "stack_name", "stack_id", "properties")


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
        from nestedflow.cmd.commands import heat_columns

        found = listing.select(found, parsed_args, "name")
        shown = HEAT_LIST_COLUMNS
        if parsed_args.long or parsed_args.nested_depth:
            shown += ("stack_name",)
        names = heat_columns.names(parsed_args, shown, LIST_COLUMNS)
        return names, heat_columns.rows(found, names)


class ShowResource(bases.ShowOne):
    """Show one resource of a stack."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
        parser.add_argument("resource", metavar="<resource>", help="name of the resource")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions
        from nestedflow.cmd.commands import heat_columns

        stack = self.app.find_stack(parsed_args.stack)
        for resource in self.app.engine.list_resources(stack.id):
            if resource.name == parsed_args.resource:
                names = heat_columns.names(parsed_args, HEAT_SHOW_FIELDS, SHOW_FIELDS)
                values = [heat_columns.value(resource, n) for n in names]
                if "stack_name" in names:
                    values[names.index("stack_name")] = (
                        getattr(resource, "stack_name", None) or stack.name)
                return names, tuple(values)
        raise exceptions.ResourceNotFound(stack.name, parsed_args.resource)
