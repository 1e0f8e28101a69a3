"""Partial re-runs, and stopping and continuing a create or update.

``rerun`` re-runs chosen resources of a settled stack as an UPDATE
traversal to its current template (or, ``checks_only``, a CHECK traversal
running only their checks); ``stop`` is ``cancel_update(rollback=False)``;
``continue_stack`` picks a stopped (or failed) create or update up where it
stopped. All are traversals like any other: a later update supersedes them,
``cancel_update`` stops them, conductors run them, fencing applies.
"""

from nestedflow import exceptions, states, tenancy
from nestedflow.db.plans import Plan
from nestedflow.stacks.definition import load_definition


class Reruns:
    """``Engine.rerun`` and ``Engine.continue_stack``, built from the parts
    they use (as ``Previews`` and ``Snapshots`` are). Both start their
    traversal through :meth:`StackLifecycle.start_traversal`, the route
    every action takes, so each records its request id as any other."""

    def __init__(self, db, registry, stacks):
        self.db = db
        self.registry = registry
        self.stacks = stacks

    def rerun(self, stack_id, resources, with_dependents=False, with_dependencies=False,
              checks_only=False, context=None):
        """Start the re-run; returns the stack's id."""
        stack = self.stacks.live_stack(stack_id)
        _require_settled(stack, "re-run")
        if stack.action == states.DELETE:
            raise exceptions.ActionNotAllowed(f"stack {stack.name} is deleted; nothing to re-run")
        if isinstance(resources, str):
            resources = [resources]
        if not resources:
            raise exceptions.ActionNotAllowed("name at least one resource to re-run")
        definition = load_definition(self.db, self.registry, stack, stack.raw_template_id)
        for name in resources:
            if name not in definition.resources:
                raise exceptions.ResourceNotFound(stack.name, name)
        requires = {name: set(deps) for name, deps in definition.dependencies().items()}
        selected = set(resources)
        if with_dependents:
            needed_by = {name: set() for name in requires}
            for name, deps in requires.items():
                for dep in deps:
                    needed_by.setdefault(dep, set()).add(name)
            selected |= _closure(resources, needed_by)
        if with_dependencies:
            selected |= _closure(resources, requires)
        action = states.CHECK if checks_only else states.UPDATE
        ordered = [name for name in definition.resources if name in selected]
        what = "checks of" if checks_only else "re-run of"
        self.stacks.start_traversal(
            stack.id, stack.current_traversal, action,
            plan=Plan(states.RERUN, tuple(ordered), checks_only),
            status_reason=f"Stack {action} started: {what} {', '.join(ordered)}",
            **tenancy.context_values(context))
        return stack.id

    def continue_stack(self, stack_id, context=None):
        """Start the continuation; returns the stack's id."""
        stack = self.stacks.live_stack(stack_id)
        _require_settled(stack, "continue")
        if stack.action not in (states.CREATE, states.UPDATE) or stack.status != states.FAILED:
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_{stack.status}: only a stopped (or "
                "failed) create or update can be continued")
        reason = f"Stack {stack.action} continued"
        # An update converges from whatever exists: running it again with
        # the same template (and the same previous one to roll back to)
        # picks up where the stopped one was. A create follows its plan.
        plan = Plan(states.CONTINUE) if stack.action == states.CREATE else None
        self.stacks.start_traversal(stack.id, stack.current_traversal, stack.action, plan=plan,
                                    status_reason=reason, **tenancy.context_values(context))
        return stack.id


def _require_settled(stack, what):
    if stack.status == states.IN_PROGRESS:
        raise exceptions.ActionNotAllowed(
            f"stack {stack.name} is {stack.action}_IN_PROGRESS; {what} it once it settles "
            "(or stop it first)")


def _closure(start, edges):
    found, todo = set(), list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in found:
                found.add(nxt)
                todo.append(nxt)
    return found
