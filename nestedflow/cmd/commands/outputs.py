"""``stack output list|show`` (and the older ``stack outputs``)."""


from nestedflow.cmd.commands import bases, columns, tables


def _stack_arg(parser):
    parser.add_argument("stack", metavar="<stack>", help="name or ID of stack to query")


class ListOutput(tables.Lister):
    """List a stack's outputs."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        return parser

    def take_action(self, parsed_args):
        # heatclient's columns: output_key and description (osc/v1/stack.py
        # OutputListStack, from Heat's list_outputs); the value answers -c.
        from nestedflow.cmd.commands import heat_columns

        stack = self.app.find_stack(parsed_args.stack)
        outputs = stack.outputs or {}
        described = descriptions(self.app.engine, stack)
        names = heat_columns.names(parsed_args, ("output_key", "description"),
                                   ("output_value",))
        rows = []
        for key in sorted(outputs):
            row = {"output_key": key, "output_value": columns.cell(outputs[key]),
                   "description": described.get(key)}
            rows.append(tuple(columns.cell(row[n]) if n != "output_value" else row[n]
                              for n in names))
        return names, rows


class ShowOutput(bases.ShowOne):
    """Show one output of a stack (or all of them with --all)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        parser.add_argument("output", metavar="<output>", nargs="?",
                            help="name of the output to show")
        parser.add_argument("-a", "--all", action="store_true", help="show all outputs")
        return parser

    def take_action(self, parsed_args):
        from nestedflow import exceptions
        from nestedflow.cmd.errors import CommandError

        stack = self.app.find_stack(parsed_args.stack)
        outputs = stack.outputs or {}
        if parsed_args.all:
            return all_outputs(outputs)
        if not parsed_args.output:
            raise CommandError("either <output> or --all must be specified")
        if parsed_args.output not in outputs:
            raise exceptions.NestedflowError(
                f"Output {parsed_args.output} not found in stack {stack.name}")
        described = descriptions(self.app.engine, stack)
        names = ("output_key", "description", "output_value")
        values = (parsed_args.output, described.get(parsed_args.output),
                  columns.cell(outputs[parsed_args.output]))
        # heatclient adds output_error when the value could not be resolved.
        error = (getattr(stack, "output_errors", None) or {}).get(parsed_args.output)
        if error:
            names, values = names + ("output_error",), values + (error,)
        return names, values


def descriptions(engine, stack):
    """Output name -> its description as Heat answers it (heat/engine/output.py
    ``OutputDefinition.description()``: "No description given" when none)."""
    declared = engine.get_template(stack.id).get("outputs") or {}
    found = {}
    for key in stack.outputs or {}:
        entry = declared.get(key)
        description = entry.get("description") if isinstance(entry, dict) else None
        found[key] = "No description given" if description is None else str(description)
    return found


def all_outputs(outputs):
    names = tuple(sorted(outputs))
    return names, tuple(columns.cell(outputs[n]) for n in names)


class StackOutputs(bases.ShowOne):
    """Show all of a stack's outputs (as ``stack output show --all``)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        return parser

    def take_action(self, parsed_args):
        return all_outputs(self.app.find_stack(parsed_args.stack).outputs or {})
