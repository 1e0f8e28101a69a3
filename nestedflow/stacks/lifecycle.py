"""Starting traversals: validate, store, take over the stack, dispatch.

Shared by the public Engine and by nested-stack resources, which create,
update and delete their child stacks through the same path -- each child
its own stack row, traversal and job.
"""

import uuid

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.stacks.definition import StackDefinition
from nestedflow.template import loader


class StackLifecycle:
    def __init__(self, db, registry, dispatch):
        self.db = db
        self.registry = registry
        self._dispatch = dispatch

    def live_stack(self, stack_id):
        stack = self.db.find_stack(stack_id)
        if stack.deleted_at is not None:
            raise exceptions.StackNotFound(stack_id)
        return stack

    # -- create -------------------------------------------------------------

    def create(self, name, template, parameters=None, files=None, environment=None,
               disable_rollback=False, timeout=None, parent=None, stack_id=None):
        """Store a new stack and dispatch its create; returns the stored row
        (as written, before the traversal changed anything).

        A nested stack passes ``parent`` (a :class:`nestedflow.stacks.children.
        ParentLink`) and a ``stack_id`` derived from its parent's create key,
        so a re-run of the parent's task finds the child it made.
        """
        stack_id = stack_id or str(uuid.uuid4())
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)
                                    or timeout < 1):
            raise exceptions.StackValidationFailed(
                f"must be a whole number of minutes, at least 1 (got {timeout!r})",
                path="timeout")
        if parent is not None:
            try:
                existing = self.db.get_stack(stack_id)
            except exceptions.StackNotFound:
                existing = None
            if existing is not None:
                return existing
        else:
            _check_name(name)
        depth = 0 if parent is None else parent.depth + 1
        definition = self.load(template, files, environment, parameters, stack_id, name,
                               depth=depth, root_id=parent.root_id if parent else None)
        traversal_id = str(uuid.uuid4())
        dependencies = definition.dependencies()
        stack = self.db.create_stack(
            stack_values={
                "id": stack_id,
                "name": name,
                "action": "CREATE",
                "status": "IN_PROGRESS",
                "status_reason": "Stack CREATE started",
                "current_traversal": traversal_id,
                "disable_rollback": bool(disable_rollback),
                "timeout": timeout,
                "root_id": parent.root_id if parent else stack_id,
                "parent_id": parent.stack_id if parent else None,
                "owner_resource": parent.resource_name if parent else None,
                "nested_depth": depth,
            },
            template_values=_template_values(definition, files, parameters),
            resource_values=[
                _resource_values(res_name, res, dependencies)
                for res_name, res in definition.resources.items()
            ],
            # A top-level stack's name is unique among live ones; the
            # stack's own INSERT checks it (a round trip less per create).
            unique_name=parent is None,
        )
        self._dispatch(stack_id, traversal_id, "CREATE")
        return stack

    # -- update -------------------------------------------------------------

    def update(self, stack_id, template, parameters=None, files=None, environment=None,
               existing=False, disable_rollback=None):
        """Converge the stack to a new template; supersedes a traversal in progress.

        ``existing=True`` is Heat's PATCH: the stored template, parameters,
        files and environment are kept where not given.
        """
        stack = self.live_stack(stack_id)
        if stack.action == "DELETE":
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is being deleted (or was); it cannot be updated")
        if existing:
            stored = self.db.get_template(stack.raw_template_id)
            template = stored.template if template is None else template
            parameters = {**stored.parameters, **(parameters or {})}
            files = {**stored.files, **(files or {})}
            environment = _merge_environment(stored.environment, environment)
        definition = self.load(template, files, environment, parameters, stack.id, stack.name,
                               depth=stack.nested_depth, root_id=stack.root_id)
        dependencies = definition.dependencies()
        values = {"status_reason": "Stack UPDATE started"}
        if disable_rollback is not None:
            values["disable_rollback"] = bool(disable_rollback)
        traversal_id = str(uuid.uuid4())
        for _attempt in range(5):
            # Another update may take over between our read and our write;
            # the compare-and-swap then fails and we build on the newer state.
            current = {r.name for r in self.db.list_resources(stack.id)}
            added = [
                _resource_values(name, res, dependencies)
                for name, res in definition.resources.items() if name not in current
            ]
            try:
                self.db.begin_update(
                    stack.id, stack.current_traversal, traversal_id, "UPDATE",
                    _template_values(definition, files, parameters), added, **values)
                break
            except exceptions.TraversalSuperseded:
                stack = self.db.get_stack(stack.id)
        else:
            raise exceptions.ActionNotAllowed(f"stack {stack.name} keeps changing; retry")
        self._dispatch(stack.id, traversal_id, "UPDATE")
        return stack.id

    # -- delete, suspend, resume, check, cancel -------------------------------

    def delete(self, stack_id):
        stack = self.live_stack(stack_id)
        traversal_id = str(uuid.uuid4())
        # Takes over from any traversal in progress; its tasks stop at
        # their next ownership check, and in-flight actions finish first.
        self.db.begin_traversal(stack.id, stack.current_traversal, traversal_id, "DELETE",
                                status_reason="Stack DELETE started")
        self._dispatch(stack.id, traversal_id, "DELETE")
        return stack.id

    def action(self, stack_id, action):
        stack = self.live_stack(stack_id)
        if stack.status == "IN_PROGRESS":
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_IN_PROGRESS; {action.lower()} it "
                "once it settles")
        traversal_id = str(uuid.uuid4())
        self.db.begin_traversal(stack.id, stack.current_traversal, traversal_id, action,
                                status_reason=f"Stack {action} started")
        self._dispatch(stack.id, traversal_id, action)
        return stack.id

    def cancel(self, stack_id, rollback=True):
        """Ask the create/update in progress to stop; returns its traversal id."""
        stack = self.live_stack(stack_id)
        if stack.status != "IN_PROGRESS" or stack.action not in ("CREATE", "UPDATE"):
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_{stack.status}: only a create or "
                "update in progress can be cancelled")
        self.db.request_cancel(stack.id, stack.current_traversal,
                               "rollback" if rollback else "stop")
        return stack.current_traversal

    # -- validation -----------------------------------------------------------

    def load(self, template, files, environment, parameters, stack_id, name, depth=0,
             root_id=None):
        """Validate everything before anything is stored."""
        self._check_size(files)
        limit = CONF.engine.max_nested_stack_depth
        if depth > limit:
            raise exceptions.StackValidationFailed(
                f"nested stack depth {depth} exceeds the maximum of {limit}")
        definition = StackDefinition.load(
            template,
            files=files,
            environment=environment,
            params=parameters,
            registry=self.registry,
            stack_id=stack_id,
            stack_name=name,
            max_size=CONF.engine.max_template_size,
            depth=depth,
        )
        count = len(definition.resources)
        if root_id is not None:
            count += self.db.count_tree_resources(root_id, exclude_stack=stack_id)
        limit = CONF.engine.max_resources_per_stack
        if count > limit:
            raise exceptions.StackValidationFailed(
                f"{count} resources exceed the limit of {limit} per stack tree",
                path="resources")
        return definition

    @staticmethod
    def _check_size(files):
        limit = CONF.engine.max_template_size
        for fname, content in (files or {}).items():
            if content is not None and len(str(content)) > limit:
                raise exceptions.StackValidationFailed(
                    f"file is {len(str(content))} bytes, over the {limit}-byte limit",
                    path=f"files.{fname}",
                )


def _check_name(name):
    if not name or len(name) > 255:
        raise exceptions.StackValidationFailed("stack name must be 1-255 characters")


def _resource_values(name, definition, dependencies):
    return {
        "name": name,
        "type": definition.type,
        "action": "INIT",
        "status": "COMPLETE",
        "requires": sorted(dependencies.get(name, ())),
        "deletion_policy": definition.deletion_policy,
    }


def _template_values(definition, files, parameters):
    return {
        "template": definition.template.raw,
        "files": dict(files or {}),
        "environment": definition.template.environment or {},
        "parameters": dict(parameters or {}),
    }


def _merge_environment(stored, new):
    if not new:
        return stored
    if isinstance(new, str):
        new = loader.load(new)
    merged = dict(stored or {})
    for key, value in new.items():
        if isinstance(value, dict):
            merged[key] = {**merged.get(key, {}), **value}
        else:
            merged[key] = value
    return merged
