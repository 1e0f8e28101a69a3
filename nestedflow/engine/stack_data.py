"""A stack's stored template, environment and files, and Heat's abandon data.

``abandon_stack`` follows Heat's ``EngineService.abandon_stack`` and
``Stack.prepare_abandon`` / ``Resource.prepare_abandon``
(heat/engine/service.py, stack.py, resource.py): the answer carries the
template, environment and files and, per resource, its physical id
(``resource_id``) and plugin data (``resource_data``); a nested stack's
resources are under its resource's ``resources``, as Heat's older
``StackResource.prepare_abandon`` nested them. The stack then leaves
nestedflow and its physical objects stay where they are; Heat's adopt
(``Engine.create_stack(adopt_stack_data=...)``) takes them over again.
"""

from nestedflow import exceptions, states, tenancy
from nestedflow.db import models
from nestedflow.template.parameters import REDACTED


class StackData:
    def __init__(self, db, stacks, tags=None):
        self.db = db
        self.stacks = stacks
        self.tags = tags

    def _stored(self, stack_id):
        stack = self.stacks.live_stack(stack_id)
        return stack, self.db.get_template(stack.raw_template_id)

    def get_template(self, stack_id):
        """The stack's current template, as given (Heat's ``template show``)."""
        return copy_stored(self._stored(stack_id)[1].template)

    def get_environment(self, stack_id):
        """The stack's environment: ``parameters``, ``parameter_defaults``,
        ``resource_registry`` (Heat's ``environment show``)."""
        stored = self._stored(stack_id)[1]
        environment = dict(copy_stored(stored.environment) or {})
        # Parameters given with the create or update are part of what the
        # user passed, as Heat keeps them in the stored environment.
        parameters = {**(environment.get("parameters") or {}), **(stored.parameters or {})}
        # As Heat's get_environment: hidden parameters (of the template or
        # any template in its files) are shown as '******'.
        hidden = hidden_parameters(stored.template, stored.files)
        return {
            "parameters": _masked(parameters, hidden),
            "parameter_defaults": _masked(environment.get("parameter_defaults") or {}, hidden),
            "resource_registry": dict(environment.get("resource_registry") or {}),
            **{key: value for key, value in environment.items()
               if key not in ("parameters", "parameter_defaults", "resource_registry")},
        }

    def get_files(self, stack_id):
        """The stack's files map: name -> contents (Heat's ``file show``)."""
        return dict(copy_stored(self._stored(stack_id)[1].files) or {})

    def prepare_abandon(self, stack_id, extra=None):
        """Heat's abandon data of the stack (nothing changes); ``extra(stack,
        row)`` adds fields to each resource's entry."""
        stack, stored = self._stored(stack_id)
        return self._abandon_data(stack, stored, extra)

    def _abandon_data(self, stack, stored, extra=None):
        template = stored.template if isinstance(stored.template, dict) else {}
        definitions = template.get("resources") or {}
        children = {child.owner_resource: child for child in self.db.list_children(stack.id)
                    if child.deleted_at is None}
        resources = {}
        for row in self.db.list_resources(stack.id):
            entry = {
                "name": row.name,
                "resource_id": row.physical_id,
                "type": row.type,
                "action": row.action,
                "status": row.status,
                "metadata": dict((definitions.get(row.name) or {}).get("metadata") or {}),
                "resource_data": dict((row.attr_data or {}).get("data") or {}),
            }
            if extra is not None:
                entry.update(extra(stack, row))
            child = children.get(row.name)
            if child is not None:
                child_data = self._abandon_data(child, self.db.get_template(
                    child.raw_template_id), extra)
                entry["resources"] = child_data["resources"]
            resources[row.name] = entry
        environment = {**(stored.environment or {})}
        environment["parameters"] = {**(environment.get("parameters") or {}),
                                     **(stored.parameters or {})}
        return {
            "name": stack.name,
            "id": stack.id,
            "action": stack.action,
            "status": stack.status,
            "template": copy_stored(stored.template),
            "environment": copy_stored(environment),
            "files": dict(copy_stored(stored.files) or {}),
            "resources": resources,
            "project_id": "",
            "stack_user_project_id": "",
            "tags": self.tags.of([stack.id])[stack.id] if self.tags else [],
        }

    def abandon(self, stack_id, context=None):
        """Remove the stack (and its nested stacks) from nestedflow, leaving
        every physical object; returns Heat's abandon data."""
        stack, stored = self._stored(stack_id)
        if stack.status == states.IN_PROGRESS:
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_IN_PROGRESS; abandon it once it "
                "settles (or cancel it)")
        data = self._abandon_data(stack, stored)
        self._remove(stack, tenancy.context_values(context))
        return data

    def _remove(self, stack, context_values):
        """Deleted without deleting anything it made: a traversal of its own
        takes the stack over (a compare-and-swap: nothing else may act on it
        meanwhile) and settles it DELETE_COMPLETE at once."""
        for child in self.db.list_children(stack.id):
            if child.deleted_at is None:
                self._remove(child, context_values)
        traversal_id = self.stacks.begin_traversal(
            stack.id, stack.current_traversal, states.DELETE,
            status_reason="Stack DELETE started (abandon)", **context_values)
        self.db.set_stack_state(stack.id, traversal_id, states.DELETE, states.COMPLETE,
                                "Stack abandoned: its resources were left in place",
                                deleted_at=models.utcnow())


def copy_stored(value):
    """A deep copy of stored JSON (the stored rows are shared and cached)."""
    if isinstance(value, dict):
        return {key: copy_stored(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_stored(item) for item in value]
    return value


def hidden_parameters(template, files):
    from nestedflow.template import loader

    names = set()
    for source in (template, *(files or {}).values()):
        try:
            tmpl = source if isinstance(source, dict) else loader.load(source)
        except exceptions.StackValidationFailed:
            continue  # a file that is not a template
        for name, spec in (tmpl.get("parameters") or {}).items():
            hidden = isinstance(spec, dict) and str(spec.get("hidden")).lower()
            if hidden in ("true", "1", "yes", "on"):
                names.add(name)
    return names


def _masked(values, hidden):
    return {name: (REDACTED if name in hidden else value) for name, value in values.items()}
