"""``stack event list|show`` (and the older ``stack events``)."""


from nestedflow.cmd.commands import bases, columns, listing, resources, tables

FIELDS = ("id", "timestamp", "resource_name", "action", "status", "status_reason",
          "physical_id", "engine_id")
#: Seconds between two looks for new events with --follow (heatclient: 5).
FOLLOW_INTERVAL = 1.0

#: heatclient's ``stack event list`` columns (osc/v1/event.py ``ListEvent``);
#: ``stack_name`` with --nested-depth. --long adds nestedflow's engine_id.
HEAT_COLUMNS = ("resource_name", "id", "resource_status", "resource_status_reason",
                "event_time", "physical_resource_id", "logical_resource_id")


class ListEvent(tables.Lister):
    """List a stack's events, oldest first (one per line by default, as
    heatclient prints them; ``-f table|json|yaml|value|csv`` for columns)."""

    @property
    def formatter_namespace(self):
        return "nestedflow.formatter.events"

    @property
    def formatter_default(self):
        return "log"

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")
        parser.add_argument("--resource", metavar="<resource>",
                            help="only the events of this resource")
        resources.add_nested_depth(parser)
        tables.add_long_argument(
            parser, "the event id, physical id and the engine (or conductor) that ran "
            "the action")
        listing.add_arguments(parser, FIELDS)
        parser.add_argument("--follow", action="store_true",
                            help="print events as they happen, until interrupted "
                                 "(log format only)")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        if parsed_args.follow:
            return self._follow(stack, parsed_args)
        return self._columns(stack, parsed_args, self._events(stack, parsed_args))

    def _events(self, stack, parsed_args, after=None):
        """The events asked for; with ``after``, only those with a greater id
        (ids grow with every event written, in every stack of the tree)."""
        found = self.app.engine.list_events(stack.id, nested_depth=parsed_args.nested_depth)
        if parsed_args.resource:
            found = [e for e in found if e.resource_name == parsed_args.resource]
        found = listing.select(found, parsed_args, "id")
        if after is not None:
            found = [e for e in found if e.id > after]
        return found

    def _columns(self, stack, parsed_args, found):
        from nestedflow.cmd.commands import heat_columns

        parsed_args.top_stack_name = stack.name  # the log format names nested ones only
        shown = HEAT_COLUMNS
        if parsed_args.nested_depth:
            shown += ("stack_name",)
        if parsed_args.long:
            shown += ("engine_id",)
        names = heat_columns.names(parsed_args, shown, FIELDS)
        rows = heat_columns.rows(found, names)
        if "physical_resource_id" in names:
            # A stack's own events carry the stack's id as their physical id,
            # as Heat's format_event: what heatclient's --wait looks for.
            ids = {stack.name: stack.id}
            if parsed_args.nested_depth:
                ids.update((s.name, s.id) for s in self.app.engine.list_stacks(show_nested=True))
            at = names.index("physical_resource_id")
            for i, event in enumerate(found):
                owner = getattr(event, "stack_name", None) or stack.name
                if event.resource_name == owner and owner in ids:
                    rows[i] = rows[i][:at] + (ids[owner],) + rows[i][at + 1:]
        return names, rows


    def _follow(self, stack, parsed_args):
        """heatclient's ``--follow`` (osc/v1/event.py): the events so far,
        then each new one, polling every FOLLOW_INTERVAL seconds, until
        Ctrl-C -- which ends the command only, never the stack's action."""
        import time

        from nestedflow.cmd.errors import CommandError

        if parsed_args.formatter != "log":
            raise CommandError("--follow can only be specified with --format log")
        formatter = self._formatter_plugins["log"].obj
        self.app.followed_stack = stack.name
        last = None
        while True:
            found = self._events(stack, parsed_args, last)
            if found:
                names, rows = self._columns(stack, parsed_args, found)
                formatter.emit_list(names, rows, self.app.stdout, parsed_args)
                self.app.stdout.flush()
                last = found[-1].id
            time.sleep(FOLLOW_INTERVAL)


class ShowEvent(bases.ShowOne):
    """Show one event of a stack's resource."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack")
        parser.add_argument("resource", metavar="<resource>",
                            help="name of the resource (the stack's name for stack events)")
        parser.add_argument("event", metavar="<event>", help="ID of the event")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions

        stack = self.app.find_stack(parsed_args.stack)
        for event in self.app.engine.list_events(stack.id):
            if (str(event.id) == parsed_args.event
                    and event.resource_name == parsed_args.resource):
                return FIELDS + ("stack_name",), columns.row(event, FIELDS) + (stack.name,)
        raise exceptions.NestedflowError(
            f"Event {parsed_args.event} of {parsed_args.resource} not found in stack "
            f"{stack.name}")
