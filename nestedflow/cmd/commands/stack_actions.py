"""``stack suspend|resume|check|cancel`` (as ``openstack stack ...``).

Followed: heatclient/osc/v1/stack.py ``StackActionBase`` and
``_stacks_action``: each command takes one or more stacks, acts on each in
turn (waiting for each with ``--wait``) and lists them afterwards with
``stack list``'s columns. Unlike heatclient, a stack whose action fails
does not stop the others: every stack is acted on, each failure is one
``ERROR:`` line, and the exit status is 1 if any failed.
"""

from nestedflow import states
from nestedflow.cmd.commands import heat_columns, stacks, tables, waiting


class _SimpleAction(tables.Lister):
    #: The action that must complete for a stack to count as done.
    action = None
    #: Engine method starting the action.
    method = None
    exit_code = 0

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stacks", metavar="<stack>", nargs="+",
                            help="stack(s) to act on (name or ID)")
        waiting.add_wait_argument(parser)
        return parser

    def start(self, stack_id, parsed_args):
        return getattr(self.app.engine, self.method)(stack_id)

    def succeeded(self, stack):
        return waiting.succeeded(stack, self.action)

    def take_action(self, parsed_args):
        from nestedflow import exceptions

        settled = []
        for name_or_id in parsed_args.stacks:
            stack = self.app.find_stack(name_or_id)
            started = self.start(stack.id, parsed_args)
            final, waited = waiting.settle(self.app, parsed_args, started)
            if final is None:
                raise exceptions.StackNotFound(started.id)
            if waited and not self.succeeded(final):
                self.exit_code = 1
                self.app.stderr.write(waiting.failure_line(final))
            settled.append(final)
        names = heat_columns.names(parsed_args, stacks.HEAT_LIST_COLUMNS, stacks.LIST_COLUMNS)
        return names, heat_columns.rows(settled, names)

    def run(self, parsed_args):
        super().run(parsed_args)
        return self.exit_code


class SuspendStack(_SimpleAction):
    """Suspend stack(s)."""

    action, method = states.SUSPEND, "suspend_stack"


class ResumeStack(_SimpleAction):
    """Resume stack(s)."""

    action, method = states.RESUME, "resume_stack"


class CheckStack(_SimpleAction):
    """Check stack(s)."""

    action, method = states.CHECK, "check_stack"


class CancelStack(_SimpleAction):
    """Cancel current task for stack(s): an update in progress is rolled back
    by default; with ``--no-rollback`` a create or update stops where it is."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--no-rollback", dest="rollback", action="store_false",
                            help="cancel without rollback")
        return parser

    def start(self, stack_id, parsed_args):
        self.rollback = parsed_args.rollback
        return self.app.engine.cancel_update(stack_id, rollback=parsed_args.rollback)

    def succeeded(self, stack):
        if self.rollback:
            # The cancelled update rolls back: success is a clean rollback.
            return stack.action == states.ROLLBACK and stack.status == states.COMPLETE
        # Without rollback the update stops as UPDATE_FAILED, which is what was asked.
        return stack.status != states.IN_PROGRESS
