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


def _resource(app, stack_name_or_id, name):
    """``(stack, resource view)`` of the resource ``name`` of a stack."""
    from nestedflow import exceptions

    stack = app.find_stack(stack_name_or_id)
    for resource in app.engine.list_resources(stack.id):
        if resource.name == name:
            return stack, resource
    raise exceptions.ResourceNotFound(stack.name, name)


def _stack_and_resource_arguments(parser, resource_help):
    parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
    parser.add_argument("resource", metavar="<resource>", help=resource_help)


class ShowResource(bases.ShowOne):
    """Show one resource of a stack."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_and_resource_arguments(parser, "name of the resource")
        # heatclient/osc/v1/resource.py ResourceShow: --with-attr goes to
        # Heat as with_attr, whose answer's "attributes" then holds every
        # attribute of the type plus the ones named.
        parser.add_argument("--with-attr", metavar="<attribute>", action="append",
                            help="attribute to show, can be specified multiple times "
                                 "(adds the attributes field: every attribute of the "
                                 "resource's type, and these)")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import heat_columns

        stack, resource = _resource(self.app, parsed_args.stack, parsed_args.resource)
        names = heat_columns.names(parsed_args, HEAT_SHOW_FIELDS, SHOW_FIELDS)
        values = [heat_columns.value(resource, n) for n in names]
        if "stack_name" in names:
            values[names.index("stack_name")] = (
                getattr(resource, "stack_name", None) or stack.name)
        if parsed_args.with_attr:
            from nestedflow.cmd.commands import columns
            from nestedflow.heat_rpc import formats

            found = formats.attributes(self.app.engine, stack.id, resource.name,
                                       parsed_args.with_attr)
            names, values = names + ("attributes",), values + [columns.cell(found)]
        return names, tuple(values)


class ResourceMetadata(bases.ShowOne):
    """Show resource metadata.

    The ``metadata`` section of the resource in the stack's template, as
    written (what Heat's API answers through nestedflow, see
    doc/source/heat.rst), printed as one JSON object unless ``-f`` says
    otherwise: heatclient's ``stack resource metadata`` (osc/v1/resource.py
    ``ResourceMetadata``, a ``JsonFormat`` whose fields are the keys).
    """

    @property
    def formatter_default(self):
        return "json"

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_and_resource_arguments(parser, "name of the resource to show the metadata for")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.commands import columns
        from nestedflow.heat_rpc import formats

        stack, resource = _resource(self.app, parsed_args.stack, parsed_args.resource)
        found = formats.metadata(self.app.engine.get_template(stack.id), resource.name)
        return tuple(found), tuple(columns.cell(value) for value in found.values())


class MarkUnhealthy(bases.Command):
    """Set the unhealthy status of a resource (the next update replaces it)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack")
        parser.add_argument("resource", metavar="<resource>", help="name of the resource")
        parser.add_argument("reason", metavar="<reason>", nargs="?", default="",
                            help="reason for the state change")
        parser.add_argument("--reset", action="store_true",
                            help="mark the resource healthy again")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        self.app.engine.mark_resource_unhealthy(stack.id, parsed_args.resource,
                                                not parsed_args.reset, parsed_args.reason)
        return 0
