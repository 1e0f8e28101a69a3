"""``stack failures list`` (heatclient's ``openstack stack failures list``):
the failed resources of a stack and of its failed nested stacks, each with
its path and reason.

Followed: heatclient/osc/v1/stack_failures.py ``ListStackFailures`` -- a
stack that is not FAILED prints nothing; a failed nested-stack resource is
replaced by the failed resources inside it and listed itself only when
its nested stack has none (or no longer exists); each entry prints
``resource_type``, ``physical_resource_id``, ``status`` and an indented
``status_reason`` block truncated to its last lines unless ``--long``.
"""

from nestedflow.cmd.commands import bases

#: heatclient's format_utils.indent_and_truncate default: the last 10 lines.
TRUNCATE_LINES = 10


def indent_and_truncate(text, spaces=4, truncate=True, lines=TRUNCATE_LINES):
    kept = (text or "").splitlines()
    if truncate and len(kept) > lines:
        kept = ["..."] + kept[-lines:]
    return "\n".join(" " * spaces + line for line in kept)


class ListStackFailures(bases.Command):
    """Show information about failed stack resources."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="stack to display (name or ID)")
        parser.add_argument("--long", action="store_true",
                            help="show the whole status reason (default: its last "
                                 f"{TRUNCATE_LINES} lines)")
        return parser

    def _nested_stack(self, resource, parent):
        """The nested stack behind ``resource``, if it is one: its physical
        id, or -- a create that failed before recording it -- the child of
        ``parent`` named after the resource (``<parent>-<resource>-<suffix>``)."""
        from nestedflow import exceptions

        if resource.physical_id:
            try:
                child = self.app.engine.get_stack(resource.physical_id)
            except (exceptions.StackNotFound, ValueError):
                return None
            return child if child.parent_id == parent.id else None
        prefix = f"{parent.name}-{resource.name}-"
        for child in self.app.engine.list_stacks(show_nested=True):
            if child.parent_id == parent.id and child.name.startswith(prefix):
                return child
        return None

    def _collect(self, failures, stack, path):
        """Append the failed resources of ``stack``; whether any was."""
        appended = False
        for resource in self.app.engine.list_resources(stack.id):
            if resource.status != "FAILED":
                continue
            here = path + [resource.name]
            child = self._nested_stack(resource, stack)
            if child is None or not self._collect(failures, child, here):
                failures[".".join(here)] = resource
            appended = True
        return appended

    def take_action(self, parsed_args):
        stack = self.app.find_stack(parsed_args.stack)
        if stack.status != "FAILED":
            return 0
        failures = {}
        self._collect(failures, stack, [stack.name])
        out = self.app.stdout
        for path, resource in failures.items():
            out.write(f"{path}:\n")
            out.write(f"  resource_type: {resource.type}\n")
            out.write(f"  physical_resource_id: {resource.physical_id or ''}\n")
            out.write(f"  status: {resource.action}_{resource.status}\n")
            reason = indent_and_truncate(resource.status_reason,
                                          truncate=not parsed_args.long)
            out.write(f"  status_reason: |\n{reason}\n")
        return 0
