"""``stack resource signal`` and ``stack hook poll|clear`` (heatclient's)."""

import fnmatch
import json

from nestedflow.cmd.commands import bases, tables

#: heatclient's event reasons for a hook reached and cleared
#: (heatclient/common/event_utils.py get_hook_events).
HOOK_ACTIONS = {"pre-create": "CREATE", "pre-update": "UPDATE", "pre-delete": "DELETE"}


def add_hook_arguments(parser, hook):
    """``--pre-create <resource>`` (or ``--pre-update``): set a breakpoint."""
    parser.add_argument(
        f"--{hook}", metavar="<resource>", action="append", default=[],
        dest=hook.replace("-", "_"),
        help=f"name of a resource to set a {hook} hook to; 'nested/resource' for one "
        "in a nested stack; wildcards match several; may be repeated")


def hooks_environment(parsed_args, hooks=("pre-create", "pre-update")):
    """The environment setting the hooks asked for (as heatclient's
    template_utils.hooks_to_env), or None."""
    resources = {}
    for hook in hooks:
        for declaration in getattr(parsed_args, hook.replace("-", "_"), None) or ():
            here = resources
            for part in [p for p in declaration.split("/") if p]:
                here = here.setdefault(part, {})
            hooks_set = here.setdefault("hooks", [])
            if hook not in hooks_set:
                hooks_set.append(hook)
    return {"resource_registry": {"resources": resources}} if resources else None


class SignalResource(bases.Command):
    """Signal a resource with optional data (a wait condition handle, a
    scaling policy; ``{"unset_hook": "pre-create"}`` clears a breakpoint)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="name or ID of the stack")
        parser.add_argument("resource", metavar="<resource>", help="name of the resource")
        data = parser.add_mutually_exclusive_group()
        # --data-binary: a wait condition handle's curl_cli ends with it.
        data.add_argument("--data", "--data-binary", metavar="<data>", dest="data",
                          help="JSON data to send to the signal")
        data.add_argument("--data-file", metavar="<data-file>",
                          help="file containing JSON data to send to the signal")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.errors import CommandError

        text, where = parsed_args.data, "--data"
        if parsed_args.data_file is not None:
            where = parsed_args.data_file
            try:
                with open(parsed_args.data_file, encoding="utf-8") as f:
                    text = f.read()
            except OSError as error:
                raise CommandError(f"{where}: {error.strerror}") from None
        details = None
        if text is not None:
            try:
                details = json.loads(text)
            except ValueError as error:
                raise CommandError(f"{where}: data should be in JSON format: {error}") from None
        stack = self.app.find_stack(parsed_args.stack)
        self.app.engine.signal_resource(stack.id, parsed_args.resource, details)
        return 0


class HookPoll(tables.Lister):
    """List the resources of a stack paused at a hook."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="stack to display (name or ID)")
        parser.add_argument("--nested-depth", type=int, default=0, metavar="<nested-depth>",
                            help="depth of nested stacks from which to display hooks")
        return parser

    def take_action(self, parsed_args):
        from nestedflow.cmd.errors import CommandError

        stack = self.app.find_stack(parsed_args.stack)
        if stack.status != "IN_PROGRESS":
            raise CommandError(f"Stack status {stack.action}_{stack.status} not IN_PROGRESS")
        pending = {}
        events = self.app.engine.list_events(stack.id, nested_depth=parsed_args.nested_depth)
        for event in events:
            reason = event.status_reason or ""
            key = (getattr(event, "stack_name", None), event.resource_name)
            for hook, action in HOOK_ACTIONS.items():
                if reason == f"{action} paused until Hook {hook} is cleared":
                    pending[key + (hook,)] = event
                elif reason == f"Hook {hook} is cleared":
                    pending.pop(key + (hook,), None)
        columns = ["resource_name", "id", "status_reason", "status", "timestamp"]
        if parsed_args.nested_depth:
            columns.append("stack_name")
        return columns, [tuple(str(getattr(e, c, "") or "") for c in columns)
                         for e in pending.values()]


class HookClear(bases.Command):
    """Clear the hooks of resources of a stack."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="stack to display (name or ID)")
        for hook in HOOK_ACTIONS:
            parser.add_argument(f"--{hook}", action="store_true",
                                help=f"clear the {hook} hooks")
        parser.add_argument(
            "hook", metavar="<resource>", nargs="+",
            help="resource names with hooks to clear; 'nested/resource' for one in a "
            "nested stack; wildcards match several")
        return parser

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        chosen = [h for h in HOOK_ACTIONS if getattr(parsed_args, h.replace("-", "_"))]
        if not chosen:
            # heatclient: the hook the stack's action reached.
            chosen = [next((h for h, a in HOOK_ACTIONS.items() if a == stack.action),
                           "pre-create")]
        for path in parsed_args.hook:
            parts = [p for p in path.split("/") if p]
            for hook in chosen:
                self._clear(stack.id, parts[:-1], parts[-1], hook)
        return 0

    def _clear(self, stack_id, stack_patterns, resource_pattern, hook):
        engine = self.app.engine
        for resource in engine.list_resources(stack_id):
            if stack_patterns:
                if fnmatch.fnmatchcase(resource.name, stack_patterns[0]) and (
                        resource.physical_id):
                    self._clear(resource.physical_id, stack_patterns[1:], resource_pattern,
                                hook)
            elif fnmatch.fnmatchcase(resource.name, resource_pattern):
                from nestedflow import exceptions

                try:
                    engine.signal_resource(stack_id, resource.name, {"unset_hook": hook})
                except exceptions.InvalidBreakPointHook:
                    # heatclient clears what matches; a resource not paused
                    # there is skipped, as heat-api's 400 is only logged.
                    if not any(c in resource_pattern for c in "*?["):
                        raise
