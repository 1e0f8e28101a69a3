"""``stack rerun|stop|continue``: partial re-runs, and stopping and
continuing a create or update (:mod:`nestedflow.engine.reruns`)."""

from nestedflow import states
from nestedflow.cmd.commands import stacks


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
