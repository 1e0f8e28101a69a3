"""Starting traversals: validate, store, take over the stack, dispatch.

Shared by the public Engine and by nested-stack resources, which create,
update and delete their child stacks through the same path -- each child
its own stack row, traversal and job.
"""

import re
import uuid

from oslo_db import exception as db_exc

from nestedflow import exceptions, states, tenancy
from nestedflow.conf import CONF
from nestedflow.db import requests
from nestedflow.stacks.definition import StackDefinition
from nestedflow.template import environment, limits, loader


class StackLifecycle:
    def __init__(self, db, registry, dispatch):
        self.db = db
        self.registry = registry
        self._dispatch = dispatch
        #: Called like a Database.on_stack_change listener once a new stack
        #: is stored (its create's start: the INSERT is no state change).
        self.on_created = None

    def live_stack(self, stack_id):
        stack = self.db.find_stack(stack_id)
        if stack.deleted_at is not None:
            raise exceptions.StackNotFound(stack_id)
        return stack

    # -- create -------------------------------------------------------------

    def create(self, name, template, parameters=None, files=None, environment=None,
               disable_rollback=False, timeout=None, parent=None, stack_id=None,
               context=None, adopt_stack_data=None):
        """Store a new stack and dispatch its create; returns the stored row
        (as written, before the traversal changed anything).

        A nested stack passes ``parent`` (a :class:`nestedflow.stacks.children.
        ParentLink`) and a ``stack_id`` derived from its parent's create key,
        so a re-run of the parent's task finds the child it made.
        """
        stack_id = stack_id or str(uuid.uuid4())
        adopt = None
        if adopt_stack_data is not None:
            template, files, environment, adopt = adopting(adopt_stack_data, template, files,
                                                           environment)
        _check_timeout(timeout)
        if parent is not None:
            try:
                existing = self.db.get_stack(stack_id)
            except exceptions.StackNotFound:
                existing = None
            if existing is not None:
                return existing
        else:
            _check_name(name)
            self._check_name_is_not_an_id(name)
        depth = 0 if parent is None else parent.depth + 1
        definition = self.load(template, files, environment, parameters, stack_id, name,
                               depth=depth, root_id=parent.root_id if parent else None,
                               timeout=timeout)
        traversal_id = str(uuid.uuid4())
        dependencies = definition.dependencies()
        action = states.CREATE if adopt is None else states.ADOPT
        try:
            stack = self._store_new(definition, dependencies, name, stack_id, traversal_id,
                                    disable_rollback, timeout, parent, context, files,
                                    parameters, adopt, action)
        except db_exc.DBDuplicateEntry:
            if parent is None:
                raise
            # The INSERT was tried again (db.retrying) after its first commit
            # reached the server: that row is this one, still to be posted.
            stack = self.db.get_stack(stack_id)
            if stack.traversal_owner == self.db.queued_owner:
                self._dispatch(stack_id, stack.current_traversal, action)
            return stack
        if self.on_created is not None:
            self.on_created(stack_id, action, states.IN_PROGRESS, stack)
        self._record_request(stack_id, traversal_id, stack.request_context)
        self._dispatch(stack_id, traversal_id, action)
        return stack

    def _store_new(self, definition, dependencies, name, stack_id, traversal_id,
                   disable_rollback, timeout, parent, context, files, parameters, adopt,
                   action):
        depth = 0 if parent is None else parent.depth + 1
        return self.db.create_stack(
            stack_values={
                "id": stack_id,
                "name": name,
                "action": action,
                "status": states.IN_PROGRESS,
                "status_reason": f"Stack {action} started",
                "current_traversal": traversal_id,
                "disable_rollback": bool(disable_rollback),
                "timeout": timeout,
                "root_id": parent.root_id if parent else stack_id,
                "parent_id": parent.stack_id if parent else None,
                "owner_resource": parent.resource_name if parent else None,
                "nested_depth": depth,
                # A nested stack's owner is its parent's (see ParentLink.owner).
                **(parent.owner if parent else tenancy.owner_values(context)),
            },
            template_values=_template_values(definition, files, parameters),
            resource_values=[
                _resource_values(res_name, res, dependencies, adopt)
                for res_name, res in definition.resources.items()
            ],
            # A top-level stack's name is unique among live ones; the
            # stack's own INSERT checks it (a round trip less per create).
            unique_name=parent is None,
            fence=parent.fence if parent else None,
        )

    # -- update -------------------------------------------------------------

    def update(self, stack_id, template, parameters=None, files=None, environment=None,
               existing=False, disable_rollback=None, context=None, timeout=None,
               clear_parameters=(), action=states.UPDATE, fence=None):
        """Converge the stack to a new template; supersedes a traversal in progress.

        ``existing=True`` is Heat's PATCH: the stored template, parameters,
        files and environment are kept where not given, but for the
        parameters named in ``clear_parameters``, which go back to their
        defaults. ``action``: the stack's action while it converges (RESTORE
        for a snapshot's restore, as Heat's ``Stack.restore``). ``fence``:
        the parent's run updating its nested stack
        (nestedflow.db.fencing.check_run).
        """
        stack, definition, files, parameters = self.prepare_update(
            stack_id, template, parameters, files, environment, existing, clear_parameters)
        dependencies = definition.dependencies()
        _check_timeout(timeout)
        values = {"status_reason": f"Stack {action} started"}
        if timeout is not None:
            values["timeout"] = timeout
        if disable_rollback is not None:
            values["disable_rollback"] = bool(disable_rollback)
        values.update(tenancy.context_values(context))
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
                    stack.id, stack.current_traversal, traversal_id, action,
                    _template_values(definition, files, parameters), added, fence=fence,
                    **values)
                break
            except exceptions.TraversalSuperseded:
                stack = self.db.get_stack(stack.id)
        else:
            raise exceptions.ActionNotAllowed(f"stack {stack.name} keeps changing; retry")
        self._record_request(stack.id, traversal_id, values.get("request_context"))
        self._dispatch(stack.id, traversal_id, action)
        return stack.id

    def prepare_update(self, stack_id, template, parameters=None, files=None,
                       environment=None, existing=False, clear_parameters=()):
        """What an update would converge to, validated; stores nothing.

        Returns (stack row, new definition, files, parameters) -- shared by
        the update and its preview.
        """
        stack = self.live_stack(stack_id)
        if stack.action == states.DELETE:
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is being deleted (or was); it cannot be updated")
        if existing:
            stored = self.db.get_template(stack.raw_template_id)
            template = stored.template if template is None else template
            # heat/engine/service.py _prepare_stack_updates: the stored
            # parameters but the cleared ones, then the new ones.
            cleared = set(clear_parameters or ())
            retained = {k: v for k, v in stored.parameters.items() if k not in cleared}
            parameters = {**retained, **(parameters or {})}
            files = {**stored.files, **(files or {})}
            environment = _merge_environment(stored.environment, environment)
        elif template is None:
            raise exceptions.StackValidationFailed(
                "a template is needed unless the update is --existing", path="template")
        definition = self.load(template, files, environment, parameters, stack.id, stack.name,
                               depth=stack.nested_depth, root_id=stack.root_id,
                               timeout=stack.timeout)
        return stack, definition, files, parameters

    def _check_name_is_not_an_id(self, name):
        # Commands resolve NAME_OR_ID by id first: a name spelling another
        # stack's id would make that stack unreachable by name and vice versa.
        if not _UUID.fullmatch(name):
            return
        try:
            self.db.get_stack(str(uuid.UUID(name)))
        except exceptions.StackNotFound:
            return
        raise exceptions.StackValidationFailed(
            f"stack name {name!r} is the id of another stack", path="stack_name")

    # -- delete, suspend, resume, check, cancel -------------------------------

    def start_traversal(self, stack_id, expected_traversal, action, fence=None, plan=None,
                        **values):
        """Make a new traversal of ``action`` the stack's current one in
        place of ``expected_traversal`` (writing ``values`` on the stack)
        and dispatch it; returns its id. Raises TraversalSuperseded if
        ``expected_traversal`` is no longer current.

        The one route every action on an existing stack starts by, so each
        records its request id alike. ``plan`` (:class:`nestedflow.db.plans.
        Plan`): the traversal runs only that, stored with it; its job is
        dispatched as the plan's action (RERUN, CONTINUE) while the stack
        shows ``action``."""
        traversal_id = self.begin_traversal(stack_id, expected_traversal, action, fence=fence,
                                            plan=plan, **values)
        self._dispatch(stack_id, traversal_id, action if plan is None else plan.action)
        return traversal_id

    def begin_traversal(self, stack_id, expected_traversal, action, fence=None, plan=None,
                        **values):
        """:meth:`start_traversal` but for the dispatch: for an action the
        caller runs itself, at once (a snapshot, an abandon), which must
        still take the stack over and record its request id."""
        traversal_id = str(uuid.uuid4())
        self.db.begin_traversal(stack_id, expected_traversal, traversal_id, action, fence=fence,
                                plan=plan, **values)
        self._record_request(stack_id, traversal_id, values.get("request_context"))
        return traversal_id

    def _record_request(self, stack_id, traversal_id, stored_context):
        """Remember the request id the traversal runs under, if it has one
        (its events are listed with it); no write without a context."""
        request_id = (stored_context or {}).get("request_id")
        if request_id:
            requests.record(self.db, stack_id, traversal_id, request_id)

    def delete(self, stack_id, context=None, fence=None):
        stack = self.live_stack(stack_id)
        # Takes over from any traversal in progress; its tasks stop at
        # their next ownership check, and in-flight actions finish first.
        self.start_traversal(stack.id, stack.current_traversal, states.DELETE, fence=fence,
                             status_reason="Stack DELETE started",
                             **tenancy.context_values(context))
        return stack.id

    def action(self, stack_id, action, context=None, fence=None):
        stack = self.live_stack(stack_id)
        if stack.status == states.IN_PROGRESS:
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_IN_PROGRESS; {action.lower()} it "
                "once it settles")
        self.start_traversal(stack.id, stack.current_traversal, action, fence=fence,
                             status_reason=f"Stack {action} started",
                             **tenancy.context_values(context))
        return stack.id

    def cancel(self, stack_id, rollback=True):
        """Ask the create/update in progress to stop; returns its traversal id."""
        stack = self.live_stack(stack_id)
        runs_as = states.RUNS_AS.get(stack.action, stack.action)
        if stack.status != states.IN_PROGRESS or runs_as not in (states.CREATE, states.UPDATE):
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_{stack.status}: only a create or "
                "update in progress can be cancelled")
        self.db.request_cancel(stack.id, stack.current_traversal,
                               states.CANCEL_ROLLBACK if rollback else states.CANCEL_STOP)
        return stack.current_traversal

    # -- validation -----------------------------------------------------------

    def load(self, template, files, environment, parameters, stack_id, name, depth=0,
             root_id=None, timeout=None):
        """Validate everything before anything is stored."""
        limits.check_parameters_mapping(parameters)
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
            timeout=timeout,
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


def _check_timeout(timeout):
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)
                                or timeout < 1):
        raise exceptions.StackValidationFailed(
            f"must be a whole number of minutes, at least 1 (got {timeout!r})",
            path="timeout")


# Heat's rule (heat/engine/stack.py, Stack.__init__ and
# service._validate_new_stack): a letter, then letters, digits, "_", "-"
# or "."; at most 255 characters. So no spaces, control characters or "/".
_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]{0,254}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-?(?:[0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}")


def _check_name(name):
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        shown = name if isinstance(name, str) and name.isprintable() else ascii(name)
        raise exceptions.StackValidationFailed(
            f"invalid stack name {shown[:80]!r}: it must start with a letter, hold only "
            'letters, digits and "_-." and be at most 255 characters', path="stack_name")


def _resource_values(name, definition, dependencies, adopt=None):
    values = {
        "name": name,
        "type": definition.type,
        "action": states.INIT,
        "status": states.COMPLETE,
        "requires": sorted(dependencies.get(name, ())),
        "deletion_policy": definition.deletion_policy,
    }
    taken = (adopt or {}).get(name)
    if taken is not None:
        # The create task adopts instead of creating (Resource.handle_adopt).
        values["attr_data"] = {"adopt": taken}
    return values


def adopting(adopt_stack_data, template, files, environment):
    """(template, files, environment, resource name -> adopt entry) of a
    create that adopts, as Heat's: the template, files and environment of
    the abandon data unless given; resources it does not name are created."""
    data = adopt_stack_data
    if isinstance(data, str):
        data = loader.load(data)
    if not isinstance(data, dict) or not isinstance(data.get("resources", {}), dict):
        raise exceptions.StackValidationFailed(
            "must be a mapping with a resources mapping (Heat's abandon data)",
            path="adopt_stack_data")
    if template is None:
        template = data.get("template")
        if template is None:
            raise exceptions.StackValidationFailed(
                "no template given and the adopt data has none", path="adopt_stack_data")
    if files is None:
        files = data.get("files") or {}
    if environment is None:
        environment = data.get("environment") or None
    adopt = {}
    for name, entry in (data.get("resources") or {}).items():
        if not isinstance(entry, dict):
            raise exceptions.StackValidationFailed(
                "must be a mapping", path=f"adopt_stack_data.resources.{name}")
        adopt[name] = entry
    return template, files, environment, adopt


def _template_values(definition, files, parameters):
    return {
        "template": definition.template.raw,
        "files": dict(files or {}),
        "environment": definition.template.environment or {},
        "parameters": dict(parameters or {}),
    }


def _merge_environment(stored, new):
    return environment.update(stored, new)
