"""``stack checks|rerun|stop|continue|graph``: the Fuel-style checks, partial
re-runs, stop and continue, and the deployment at a glance."""


from nestedflow import states
from nestedflow.cmd.commands import bases, columns, listing, resources, stacks, tables

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


class _OneStackAction(stacks.StackCommand):
    """An action of nestedflow's own on one stack, answering ``stack show``'s fields."""

    #: Engine method starting the action.
    method = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="stack to act on (name or ID)")
        return parser

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return getattr(self.app.engine, self.method)(stack.id)


class StackRerun(_OneStackAction):
    """Re-run some resources of a stack, leaving the others untouched."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--resource", "-r", dest="resources", action="append",
                            required=True, metavar="<resource>",
                            help="a resource to re-run; may be repeated")
        parser.add_argument("--with-dependents", action="store_true",
                            help="also re-run everything that depends on them")
        parser.add_argument("--with-dependencies", action="store_true",
                            help="also re-run everything they depend on")
        parser.add_argument("--checks-only", action="store_true",
                            help="only run their checks (a smoke test): nothing is changed")
        return parser

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        self.action = states.CHECK if parsed_args.checks_only else states.UPDATE
        return self.app.engine.rerun(stack.id, parsed_args.resources,
                                     with_dependents=parsed_args.with_dependents,
                                     with_dependencies=parsed_args.with_dependencies,
                                     checks_only=parsed_args.checks_only)


class StackStop(_OneStackAction):
    """Stop a create or update at a safe point, without rolling back (continue it
    later with ``stack continue``)."""

    method = "stop_stack"

    def succeeded(self, stack):
        # Stopped means FAILED, which is what was asked.
        return stack.status != states.IN_PROGRESS


class StackContinue(_OneStackAction):
    """Continue a stopped (or failed) create or update from where it stopped."""

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        self.action = stack.action
        return self.app.engine.continue_stack(stack.id)


class StackGraph(bases.Command):
    """Show a stack's dependency graph with each resource's state and checks."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to show")
        parser.add_argument("-f", "--format", dest="graph_format", default="text",
                            choices=("text", "dot"),
                            help="text for a terminal (default), or graphviz DOT "
                            "(render with: dot -Tsvg -o stack.svg)")
        parser.add_argument("--max-width", type=int, default=80, metavar="<integer>",
                            help="width of the text view (default 80)")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.engine import graph

        stack = self.app.find_stack(parsed_args.stack)
        found = graph.build(self.app.engine, stack.id)
        if parsed_args.graph_format == "dot":
            self.app.stdout.write(graph.to_dot(found))
        else:
            self.app.stdout.write("\n".join(graph.to_text(found, parsed_args.max_width))
                                  + "\n")
        return 0
