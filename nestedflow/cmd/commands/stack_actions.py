"""``stack suspend|resume|check|cancel`` (as ``openstack stack ...``)."""

from nestedflow import states
from nestedflow.cmd.commands import stacks


class _SimpleAction(stacks.StackCommand):
    #: Engine method starting the action.
    method = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="stack to act on (name or ID)")
        return parser

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        return getattr(self.app.engine, self.method)(stack.id)


class SuspendStack(_SimpleAction):
    """Suspend a stack."""

    action, method = states.SUSPEND, "suspend_stack"


class ResumeStack(_SimpleAction):
    """Resume a suspended stack."""

    action, method = states.RESUME, "resume_stack"


class CheckStack(_SimpleAction):
    """Check a stack's resources."""

    action, method = states.CHECK, "check_stack"


class CancelStack(_SimpleAction):
    """Cancel a create or update in progress (rolling it back by default)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--no-rollback", dest="rollback", action="store_false",
                            help="stop the update without rolling back")
        return parser

    def start(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        self.rollback = parsed_args.rollback
        return self.app.engine.cancel_update(stack.id, rollback=parsed_args.rollback)

    def succeeded(self, stack):
        if self.rollback:
            # The cancelled update rolls back: success is a clean rollback.
            return stack.action == states.ROLLBACK and stack.status == states.COMPLETE
        # Without rollback the update stops as UPDATE_FAILED, which is what was asked.
        return stack.status != states.IN_PROGRESS
