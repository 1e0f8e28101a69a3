"""``stack graph``: the deployment at a glance -- the dependency graph with
each resource's state and checks (:mod:`nestedflow.engine.graph`)."""

from nestedflow.cmd.commands import bases


class StackGraph(bases.Command):
    """Show a stack's dependency graph with each resource's state and checks."""

    embedded_only = True  # the database's rows

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
