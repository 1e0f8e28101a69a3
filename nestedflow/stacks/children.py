"""What a nested-stack resource may do to its child stack.

The child is a stack of its own (its own row, traversal and job, possibly
run by another conductor); the parent's task starts the child's traversal
and then waits for the child's completion notification. While it waits it
gives up its job slot, so a deep tree never deadlocks on slots.
"""

import dataclasses
import math
import time
import uuid

from nestedflow import exceptions
from nestedflow.flows import workers


@dataclasses.dataclass(frozen=True)
class ParentLink:
    """Where a nested stack hangs in its tree."""

    stack_id: str
    root_id: str
    resource_name: str
    depth: int


class NestedStackFailed(exceptions.NestedflowError):
    """The child stack failed; ``child_reason`` is its status reason."""

    def __init__(self, child_reason, indexed=False):
        self.child_reason = child_reason
        self.indexed = indexed
        super().__init__(child_reason)

    def path_message(self, resource_name):
        """``resources.parent.resources.child: error`` (Heat's nested error path)."""
        reason = self.child_reason
        if reason.startswith("resources."):
            inner = reason[len("resources."):]
            if self.indexed:
                # Group members are named by index: resources[2] as in Heat.
                index, _, rest = inner.partition(".")
                index, sep, error = index.partition(": ")
                inner = f"[{index}]" + (f"{sep}{error}" if sep else f".{rest}")
                return f"resources.{resource_name}.resources{inner}"
            return f"resources.{resource_name}.resources.{inner}"
        return f"resources.{resource_name}: {reason}"


class ChildStacks:
    """Bound to the parent's traversal scope (nestedflow.flows.tasks.TraversalScope)."""

    def __init__(self, scope):
        self._scope = scope
        self._rt = scope.runtime
        self._parent = scope.stack

    @property
    def registry(self):
        return self._rt.registry

    @staticmethod
    def child_id(create_key):
        """The child's id follows from the parent's create key: a re-run finds it."""
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"nestedflow-child:{create_key}"))

    def parent_files(self):
        """The files of the parent's template version this action works for:
        a rollback restores children from the previous version's files."""
        template_id = self._parent.raw_template_id
        if self._scope.reverting and self._parent.prev_raw_template_id:
            template_id = self._parent.prev_raw_template_id
        return self._rt.db.get_template(template_id).files or {}

    def child_timeout(self, minutes=None):
        """The child's timeout (minutes): its own, at most what the parent has left."""
        left = self._scope.seconds_left()
        if left is not None:
            parent_minutes = max(1, math.ceil(left / 60))
            minutes = parent_minutes if minutes is None else min(minutes, parent_minutes)
        return None if minutes is None else max(1, math.ceil(minutes))

    def create(self, resource_name, create_key, template, parameters, files, timeout=None):
        parent = self._parent
        link = ParentLink(stack_id=parent.id, root_id=parent.root_id or parent.id,
                          resource_name=resource_name, depth=parent.nested_depth)
        child_id = self.child_id(create_key)
        self._rt.stacks.create(
            f"{parent.name}-{resource_name}-{child_id[:8]}", template, parameters, files,
            disable_rollback=True, timeout=self.child_timeout(timeout), parent=link,
            stack_id=child_id)
        return self.wait(child_id, "CREATE")

    def update(self, child_id, template, parameters, files):
        self._rt.stacks.update(child_id, template, parameters, files)
        return self.wait(child_id, "UPDATE")

    def delete(self, child_id):
        try:
            self._rt.stacks.delete(child_id)
        except exceptions.StackNotFound:
            return None
        return self.wait(child_id, "DELETE")

    def act(self, child_id, action):
        self._rt.stacks.action(child_id, action)
        return self.wait(child_id, action)

    def get(self, child_id):
        try:
            return self._rt.db.get_stack(child_id)
        except exceptions.StackNotFound:
            return None

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
            if db.get_stack(child_id).status != "IN_PROGRESS":
                return True
            current, owner, cancel, _ = db.ownership(parent_id)
            superseded = current != scope.traversal_id or (scope.owner and owner != scope.owner)
            return superseded or (cancel and not cancelled)

        started = time.monotonic()
        with self._rt.slots.waiting(scope.traversal_id), workers.waiting():
            while True:
                self._rt.events.wait((child_id, parent_id), done,
                                     timeout=scope.seconds_left())
                if db.get_stack(child_id).status != "IN_PROGRESS":
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
                        self._rt.stacks.cancel(child_id, rollback=cancel == "rollback")
                    except exceptions.ActionNotAllowed:
                        pass
                    continue
                # Superseded: stop waiting; the new traversal takes the child over.
                scope.check_owner()
        waited = time.monotonic() - started
        if cancelled:
            scope.check_owner()
        child = db.get_stack(child_id)
        self._rt.db.add_event(
            parent_id, self._resource_name(child), action, "IN_PROGRESS",
            f"nested stack {child.name} {child.action}_{child.status} after {waited:.3f}s",
            traversal_id=scope.traversal_id, engine_id=self._rt.engine_id)
        if (child.action, child.status) != (action, "COMPLETE"):
            raise NestedStackFailed(child.status_reason or f"{child.action}_{child.status}")
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
