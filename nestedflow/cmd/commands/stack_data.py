"""``stack template show``, ``stack environment show``, ``stack file list``,
``stack abandon``, ``stack export`` and ``stack adopt`` (as python-heatclient's
OSC plugin names them)."""

import json

from nestedflow import states
from nestedflow.cmd.commands import bases, columns, stacks, templates


def _mapping_data(mapping):
    names = tuple(sorted(mapping))
    return names, tuple(columns.cell(mapping[name]) for name in names)


class _OfStack(bases.ShowOne):
    #: Engine method answering a mapping for the stack.
    method = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return _mapping_data(getattr(self.app.engine, self.method)(stack.id))


class ShowTemplate(_OfStack):
    """Display the stack's template."""

    method = "get_template"


class ShowEnvironment(_OfStack):
    """Display the stack's environment."""

    method = "get_environment"


class ListFiles(_OfStack):
    """Show the stack's files map (name and contents)."""

    method = "get_files"


class AbandonStack(bases.ShowOne):
    """Abandon a stack: forget it, leaving its resources, and print its abandon data."""

    #: False for ``stack export`` (nothing is abandoned).
    abandon = True

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of stack")
        parser.add_argument("--output-file", metavar="<output-file>",
                            help="file to output the data to (JSON)")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        data = self.app.engine.abandon_stack(stack.id, abandon=self.abandon)
        if parsed_args.output_file:
            with open(parsed_args.output_file, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, sort_keys=True)
                f.write("\n")
            return (), ()
        return _mapping_data(data)


class ExportStack(AbandonStack):
    """Export a stack's abandon data (the stack stays)."""

    abandon = False


class AdoptStack(stacks.StackCommand):
    """Adopt a stack: take over the resources of its abandon data without creating them."""

    action = states.ADOPT

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("name", metavar="<stack-name>", help="name of the stack to adopt")
        parser.add_argument("--adopt-file", metavar="<adopt-file>", required=True,
                            help="path to the adopt data (a stack abandon's output)")
        parser.add_argument(
            "-e", "--environment", metavar="<environment>", action="append", default=[],
            dest="environments", help="path to an environment; may be repeated")
        parser.add_argument("--timeout", type=templates.positive_int, metavar="<timeout>",
                            help="stack creation timeout in minutes")
        parser.add_argument("--enable-rollback", action="store_true",
                            help="enable rollback on create/update failure")
        return parser

    def start(self, parsed_args):
        from nestedflow.cmd import template_files
        from nestedflow.cmd.errors import CommandError

        path = templates.existing_file(parsed_args.adopt_file, "adopt")
        with open(path, encoding="utf-8") as f:
            data = f.read()
        kwargs = {}
        if parsed_args.environments:
            paths = [templates.existing_file(e, "environment")
                     for e in parsed_args.environments]
            try:
                kwargs["environment"], files = template_files.environments_contents(paths)
            except template_files.FilesError as exc:
                raise CommandError(str(exc)) from None
            if files:
                kwargs["files"] = files
        # heatclient's adopt leaves rollback off unless asked for.
        return self.app.engine.create_stack(
            parsed_args.name, None, adopt_stack_data=data, timeout=parsed_args.timeout,
            disable_rollback=not parsed_args.enable_rollback, **kwargs)
