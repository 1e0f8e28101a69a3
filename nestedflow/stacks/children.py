"""What a nested-stack resource may do to its child stack.

The child is a stack of its own (its own row, traversal and job, possibly
run by another conductor); the parent's task starts the child's traversal
and then waits for the child's completion notification. While it waits it
gives up its job slot, so a deep tree never deadlocks on slots.
"""

import dataclasses
import math
import time

from nestedflow import exceptions, states, tenancy
from nestedflow.pools import workers
from nestedflow.resources import nested
from nestedflow.template import environment


@dataclasses.dataclass(frozen=True)
class ParentLink:
    """Where a nested stack hangs in its tree."""

    stack_id: str
    root_id: str
    resource_name: str
    depth: int
    #: The tenancy columns the child inherits (nestedflow.tenancy).
    owner: dict = dataclasses.field(default_factory=dict)
    #: The parent's run making the child (nestedflow.db.fencing.check_run).
    fence: tuple | None = None


class ChildReads:
    """What a nested-stack plugin reads about the children it would make:
    the plugin registry, the parent's files and the environment a child
    inherits. A preview hands a plugin this (nothing is made); a
    traversal, :class:`ChildStacks`, which also makes and waits for them."""

    def __init__(self, registry, parent_environment, parent_files):
        self._registry = registry
        self._parent_environment = parent_environment
        self._parent_files = parent_files

    @property
    def registry(self):
        return self._registry

    def parent_files(self):
        return self._parent_files

    def child_environment(self, resource_name):
        """The environment a child made by ``resource_name`` inherits (Heat's
        get_child_environment): registry and parameter_defaults, narrowed to
        the registry's entries for this resource."""
        return environment.child_environment(self._parent_environment, resource_name)

    def resolve_type(self, type_name, resource_name):
        """``type_name`` mapped through the registry of ``resource_name``'s child."""
        registry = self.child_environment(resource_name)["resource_registry"]
        return environment.resolve_type(registry, type_name)


class ChildStacks(ChildReads):
    """Bound to the parent's traversal scope (nestedflow.flows.scope.TraversalScope)."""

    def __init__(self, scope):
        self._scope = scope
        self._rt = scope.runtime
        self._parent = scope.stack

    @property
    def registry(self):
        return self._rt.registry

    child_id = staticmethod(nested.child_stack_id)

    def parent_files(self):
        """The files of the parent's template version this action works for:
        a rollback restores children from the previous version's files."""
        template_id = self._parent.raw_template_id
        if self._scope.reverting and self._parent.prev_raw_template_id:
            template_id = self._parent.prev_raw_template_id
        return self._rt.db.get_template(template_id).files or {}

    def child_environment(self, resource_name):
        template_id = self._parent.raw_template_id
        if self._scope.reverting and self._parent.prev_raw_template_id:
            template_id = self._parent.prev_raw_template_id
        parent_env = self._rt.db.get_template(template_id).environment
        return environment.child_environment(parent_env, resource_name)

    def child_timeout(self, minutes=None):
        """The child's timeout (minutes): its own, at most what the parent has left."""
        left = self._scope.seconds_left()
        if left is not None:
            parent_minutes = max(1, math.ceil(left / 60))
            minutes = parent_minutes if minutes is None else min(minutes, parent_minutes)
        return None if minutes is None else max(1, math.ceil(minutes))

    def create(self, resource_name, create_key, template, parameters, files, timeout=None,
               adopt_stack_data=None):
        parent = self._parent
        link = ParentLink(stack_id=parent.id, root_id=parent.root_id or parent.id,
                          resource_name=resource_name, depth=parent.nested_depth,
                          owner=tenancy.owner_values(None, parent), fence=self._fence())
        child_id = self.child_id(create_key)
        self._rt.stacks.create(
            f"{parent.name}-{resource_name}-{child_id[:8]}", template, parameters, files,
            environment=self.child_environment(resource_name), disable_rollback=True,
            timeout=self.child_timeout(timeout), parent=link,
            stack_id=child_id, adopt_stack_data=adopt_stack_data)
        return self.wait(child_id, states.CREATE if adopt_stack_data is None else states.ADOPT)

    def _fence(self):
        """Every write a parent's run makes on its children is fenced by the
        parent's ownership, in the same transaction (db.fencing.check_run)."""
        return (self._parent.id, self._scope.traversal_id, self._scope.owner)

    def update(self, child_id, template, parameters, files):
        resource_name = self._rt.db.get_stack(child_id).owner_resource
        self._rt.stacks.update(child_id, template, parameters, files,
                               environment=self.child_environment(resource_name),
                               fence=self._fence())
        return self.wait(child_id, states.UPDATE)

    def delete(self, child_id):
        try:
            self._rt.stacks.delete(child_id, fence=self._fence())
        except exceptions.StackNotFound:
            return None
        return self.wait(child_id, states.DELETE)

    def act(self, child_id, action):
        self._rt.stacks.action(child_id, action, fence=self._fence())
        return self.wait(child_id, action)

    def get(self, child_id):
        try:
            return self._rt.db.get_stack(child_id)
        except exceptions.StackNotFound:
            return None

    def template_of(self, child):
        """The template the child stack was last given (a dict; not to be changed)."""
        return self._rt.db.get_template(child.raw_template_id).template

    def wait(self, child_id, action):
        """Wait for the child's traversal to settle; raise if it did not succeed.

        Woken by notifications about the child (it settled) or the parent
        (its traversal was superseded or cancelled); the database is only
        read then, or after the events' safety interval.
        """
        db = self._rt.db
        scope = self._scope
        parent_id = self._parent.id
        cancelled = False

        def done():
            if db.get_stack(child_id).status != states.IN_PROGRESS:
                return True
            current, owner, cancel, _ = db.ownership(parent_id)
            superseded = current != scope.traversal_id or (scope.owner and owner != scope.owner)
            return superseded or (cancel and not cancelled)

        started = time.monotonic()
        with self._rt.slots.waiting(scope.traversal_id), workers.waiting():
            while True:
                self._rt.events.wait((child_id, parent_id), done,
                                     timeout=scope.seconds_left())
                if db.get_stack(child_id).status != states.IN_PROGRESS:
                    break
                left = scope.seconds_left()
                if left is not None and left <= 0:
                    # The parent timed out: cut the child short too (its
                    # actions in flight would run on); the parent's revert
                    # then deletes it.
                    self._stop(child_id)
                    scope.check_deadline()
                _, _, cancel, _ = db.ownership(parent_id)
                if cancel and not cancelled:
                    # Cancelling the parent cancels the child the same way.
                    cancelled = True
                    try:
                        self._rt.stacks.cancel(child_id, rollback=cancel == states.CANCEL_ROLLBACK)
                    except exceptions.ActionNotAllowed:
                        pass
                    continue
                # Superseded: stop waiting; the new traversal takes the child over.
                scope.check_owner()
        waited = time.monotonic() - started
        if cancelled:
            scope.check_owner()
        child = db.get_stack(child_id)
        # Fenced: a run paused past its claim wakes here, after the child
        # settled; it must not write on a parent another run owns now.
        self._rt.db.add_run_event(
            parent_id, scope.traversal_id, scope.owner, self._resource_name(child), action,
            states.IN_PROGRESS,
            f"nested stack {child.name} {child.action}_{child.status} after {waited:.3f}s",
            engine_id=self._rt.engine_id)
        if (child.action, child.status) != (action, states.COMPLETE):
            raise exceptions.NestedStackFailed(
                child.status_reason or f"{child.action}_{child.status}")
        return child

    def _stop(self, child_id):
        """Cancel the child's create or update with rollback, waits included."""
        try:
            traversal_id = self._rt.stacks.cancel(child_id, rollback=True)
        except exceptions.ActionNotAllowed:
            return
        # Conductors cut the waits of the runs they hold when they see the
        # cancel; a run of this process is cut here, as Engine.cancel_update does.
        self._rt.stop_event(traversal_id).set()

    @staticmethod
    def _resource_name(child):
        return child.owner_resource
