"""``stack snapshot create|list|show|delete|restore`` and ``stack resource
mark unhealthy`` (as python-heatclient's OSC plugin names them)."""


from nestedflow import states
from nestedflow.cmd.commands import bases, columns, stacks, tables

#: What list and create show of a snapshot (``show`` adds its data).
SNAPSHOT_FIELDS = ("id", "name", "status", "status_reason", "creation_time")


def _snapshot_data(snapshot, fields=SNAPSHOT_FIELDS):
    return fields, tuple(columns.cell(snapshot.get(field)) for field in fields)


def _stack_arg(parser):
    parser.add_argument("stack", metavar="<stack>", help="name or ID of stack")


class CreateSnapshot(bases.ShowOne):
    """Create a stack snapshot."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        parser.add_argument("--name", metavar="<name>", help="name of snapshot")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return _snapshot_data(self.app.engine.stack_snapshot(stack.id, parsed_args.name))


class ListSnapshot(tables.Lister):
    """List a stack's snapshots."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return SNAPSHOT_FIELDS, [_snapshot_data(s)[1]
                                 for s in self.app.engine.list_snapshots(stack.id)]


class ShowSnapshot(bases.ShowOne):
    """Show a stack snapshot, its data included."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        parser.add_argument("snapshot", metavar="<snapshot>", help="ID of the snapshot")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        snapshot = self.app.engine.show_snapshot(stack.id, parsed_args.snapshot)
        return _snapshot_data(snapshot, (*SNAPSHOT_FIELDS, "data"))


class DeleteSnapshot(bases.Command):
    """Delete a stack snapshot."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        parser.add_argument("snapshot", metavar="<snapshot>", help="ID of the snapshot")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="skip the yes/no prompt (assume yes)")
        return parser

    def take_action(self, parsed_args):
        isatty = getattr(self.app.stdin, "isatty", None)
        if not parsed_args.yes and isatty and isatty():
            self.app.stdout.write("Are you sure you want to delete the snapshot of this "
                                  "stack [Y/N]? ")
            self.app.stdout.flush()
            if self.app.stdin.readline().strip().lower() not in ("y", "yes"):
                self.app.stdout.write("Snapshot not deleted\n")
                return 0
        stack = self.app.find_stack(parsed_args.stack)
        self.app.engine.delete_snapshot(stack.id, parsed_args.snapshot)
        return 0


class RestoreSnapshot(stacks.StackCommand):
    """Restore a stack snapshot (the stack converges back to it)."""

    action = states.RESTORE

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _stack_arg(parser)
        parser.add_argument("snapshot", metavar="<snapshot>", help="ID of the snapshot")
        return parser

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return self.app.engine.restore_snapshot(stack.id, parsed_args.snapshot)
