"""Previews: what a create or an update would do, computed without storing anything.

The answers follow Heat's (heat/engine/service.py ``preview_stack`` and
``preview_update_stack``, heat/engine/api.py ``format_stack_preview`` and
``format_stack_resource``): resources are dicts with Heat's keys; a create
preview lists a nested stack's resources as a list in place of the
resource that owns it; an update preview sorts resources into ``added``,
``updated``, ``replaced``, ``deleted`` and ``unchanged``, with nested stacks'
resources merged in (naming their ``parent_resource``) when ``show_nested``.

An update preview decides each resource with the decision the update's
converge task makes (:func:`nestedflow.stacks.changes.decide`), in
dependency order, so that a resource whose dependency will be replaced (a
new physical id) is seen to change as the update will see it.
"""

from nestedflow import exceptions, states
from nestedflow.resources import base, external
from nestedflow.resources.nested import NestedStackResource
from nestedflow.stacks import changes
from nestedflow.stacks.children import ChildReads
from nestedflow.template import environment as environments
from nestedflow.template.functions import select_path
from nestedflow.template.validator import dependency_order

#: An update preview's categories (Heat's keys).
KINDS = ("added", "updated", "replaced", "deleted", "unchanged")

_KIND_OF = {changes.CREATE: "added", changes.REPLACE: "replaced",
            changes.UPDATE: "updated", changes.UNCHANGED: "unchanged"}


class Previews:
    def __init__(self, db, registry, stacks, store):
        self.db = db
        self.registry = registry
        self.stacks = stacks
        self.store = store

    # -- create -------------------------------------------------------------

    def preview_stack(self, name, template, parameters=None, files=None, environment=None,
                      timeout=None, disable_rollback=False):
        """What creating the stack would make; validates as the create does."""
        definition = self.stacks.load(template, files, environment, parameters, None, name)
        tmpl = definition.template
        return {
            "stack_name": name,
            "id": None,
            "description": tmpl.description,
            "template_description": tmpl.description,
            "parameters": {k: v for k, v in definition.parameters.items()
                           if not k.startswith("OS::")},
            "timeout_mins": timeout,
            "disable_rollback": bool(disable_rollback),
            "resources": self._create_resources(definition, name, 0, None),
        }

    def _create_resources(self, definition, stack_name, depth, parent_resource):
        """Heat's ``preview_resources``: a nested stack is the list of its own."""
        result = []
        requires = definition.dependencies()
        order = dependency_order(requires, list(definition.resources))
        for name in order:
            res = definition.resources[name]
            # Heat: a resource not created yet is referred to by its name
            # (Resource.FnGetRefId) and has no attribute values.
            properties = _resolve(definition, name, lambda ref: ref, lambda *args: None)
            plugin_cls = self.registry.get(res.type)
            if issubclass(plugin_cls, NestedStackResource) and properties is not None:
                child = self._child_definition(plugin_cls, name, res.type, properties,
                                               definition, depth + 1, f"{stack_name}-{name}")
                result.append(self._create_resources(child, f"{stack_name}-{name}", depth + 1,
                                                     name))
                continue
            result.append(_entry(name, res.type, stack_name, properties=properties,
                                 required_by=sorted(n for n, deps in requires.items()
                                                    if name in deps),
                                 parent_resource=parent_resource))
        return result

    def _child_definition(self, plugin_cls, name, type_name, properties, parent, depth,
                          child_name, row=None):
        """The definition of the child ``name`` makes, as the create or update
        builds it: from the parent ``parent``'s files and environment."""
        plugin = self._plugin(plugin_cls, name, type_name, properties, parent, row)
        files = parent.template.files or {}
        template, parameters, child_files = plugin.child_template(properties, files)
        return self.stacks.load(
            template, child_files,
            environments.child_environment(parent.template.environment, name), parameters,
            None, child_name, depth=depth)

    def _plugin(self, plugin_cls, name, type_name, properties, parent, row=None):
        """``parent``: what the resource's stack is built from -- anything
        with ``template.environment`` and ``template.files`` (a loaded
        definition, or :meth:`_stored_parent`)."""
        data = ((row.attr_data or {}).get("data") or {}) if row is not None else {}
        context = base.ActionContext(
            stack_id=row.stack_id if row is not None else "",
            stack_name="", resource_id=row.id if row is not None else 0,
            resource_name=name, type_name=type_name, traversal_id="", create_key="",
            store=self.store, physical_id=row.physical_id if row is not None else None,
            data=dict(data),
            # Reads only: what a group needs to name its members' attributes.
            children=ChildReads(self.registry, parent.template.environment,
                                parent.template.files or {}))
        return plugin_cls(name, properties, context)

    def _stored_parent(self, stack_id):
        """The stack's stored environment and files, as a plugin's child
        reads want them (the stored environment is what a run hands too:
        stacks.children.ChildStacks.child_environment)."""
        import types

        stored = self.db.get_template(self.db.get_stack(stack_id).raw_template_id)
        return types.SimpleNamespace(template=types.SimpleNamespace(
            environment=stored.environment, files=stored.files or {}))

    def resource_attributes(self, stack_id, name, names=None):
        """The current resource's attribute values (its schema's, or ``names``):
        as last stored for dependents, else asked of its plugin; None for
        one that cannot be read (as Heat's ``format_resource_attributes``)."""
        row = next((row for row in self.db.list_resources(stack_id) if row.name == name), None)
        if row is None:
            raise exceptions.ResourceNotFound(stack_id, name)
        plugin_cls = self.registry.get(row.type)
        known = (row.attr_data or {}).get("attrs") or {}
        plugin = None
        result = {}
        for attr in names or sorted(plugin_cls.attributes_schema):
            if attr in known:
                result[attr] = known[attr]
                continue
            try:
                if plugin is None:
                    plugin = self._plugin(plugin_cls, name, row.type,
                                          dict(row.properties_data or {}),
                                          self._stored_parent(stack_id), row)
                result[attr] = plugin.get_attribute(attr)
            except Exception:  # a plugin that needs a live child stack or cloud
                result[attr] = None
        return result

    # -- update -------------------------------------------------------------

    def preview_update_stack(self, stack_id, template, parameters=None, files=None,
                             environment=None, existing=False, show_nested=False):
        """What updating the stack would do to each resource (nothing is stored)."""
        stack, definition, files, _ = self.stacks.prepare_update(
            stack_id, template, parameters, files, environment, existing)
        result = {kind: [] for kind in KINDS}
        self._diff(stack, stack.name, definition, result, show_nested, None)
        return result

    def _diff(self, stack, stack_name, definition, result, show_nested, parent_resource):
        """Sort the resources of ``definition`` into ``result`` against the
        current rows of ``stack`` (None: a stack the update creates); returns
        the outputs of the stack as dependents will see them."""
        rows = {row.name: row for row in self.db.list_resources(stack.id)} if stack else {}
        children = {child.owner_resource: child for child in self.db.list_children(stack.id)
                    if child.deleted_at is None} if stack else {}
        requires = definition.dependencies()
        refs, attributes = {}, {}

        def get_resource(name):
            return refs.get(name)

        def get_attr(name, attr, path):
            return select_path(attributes[name](attr), path) if name in attributes else None

        for name in dependency_order(requires, list(definition.resources)):
            res = definition.resources[name]
            row = rows.get(name)
            properties = _resolve(definition, name, get_resource, get_attr)
            if row is None:
                kind = "added"
            elif properties is None:
                kind = "updated"  # only the update's own resolution will tell
            else:
                properties = self._kept_external(definition, row, properties)
                fingerprint = changes.fingerprint(self.registry, row.type, properties,
                                                  definition.template, name)
                kind = _KIND_OF[changes.decide(self.registry, row, res.type, properties,
                                               fingerprint)]
            result[kind].append(_entry(name, res.type, stack_name,
                                       row=row if kind == "updated" else None,
                                       properties=properties,
                                       parent_resource=parent_resource))
            child_outputs = self._diff_nested(stack, stack_name, name, res.type, row, kind,
                                              properties, definition, children.get(name),
                                              result, show_nested)
            refs[name], attributes[name] = self._outputs(name, res.type, row, kind,
                                                         properties, definition, child_outputs)
        for name, row in rows.items():
            if name not in definition.resources:
                result["deleted"].append(_entry(name, row.type, stack_name, row=row,
                                                parent_resource=parent_resource))
                if show_nested and name in children:
                    self._all_of(children[name], "deleted", result, name)
        return definition.resolve_outputs(
            get_resource=get_resource,
            get_attr=get_attr)

    @staticmethod
    def _kept_external(definition, row, properties):
        """An adopted external resource keeps its properties (as the
        converge task does: Heat skips updating it); a changed external_id
        is refused by the update, so the preview refuses it too."""
        if external.unchanged_on_update(row.name, row.type, (row.attr_data or {}).get("data"),
                                        definition.external_id(row.name)):
            return row.properties_data or {}
        return properties

    def _outputs(self, name, type_name, row, kind, properties, parent, child_outputs=None):
        """What dependents will see of the resource after the update: its
        reference and a function of an attribute name."""
        stored = (row.attr_data or {}) if row is not None else {}
        new_object = kind in ("added", "replaced")
        # A new physical object: its reference is not known yet, and differs
        # from the old one.
        ref = f"<new {name}>" if new_object else stored.get("ref")
        plugin = None
        if properties is not None:
            try:
                plugin = self._plugin(self.registry.get(type_name), name, type_name,
                                      properties, parent, None if new_object else row)
            except exceptions.NestedflowError:
                plugin = None
        if plugin is not None and child_outputs is not None:
            # A nested stack's attributes are its outputs, as predicted.
            plugin.outputs = lambda: child_outputs
        known = stored.get("attrs") or {}

        def attribute(attr):
            if kind == "unchanged" and attr in known:
                return known[attr]
            try:
                return plugin.get_attribute(attr) if plugin is not None else None
            except Exception:  # a plugin that needs a live child stack or cloud
                return known.get(attr)

        return ref, attribute

    def _diff_nested(self, stack, stack_name, name, type_name, row, kind, properties, parent,
                     child, result, show_nested):
        """A nested stack's own resources into ``result`` (if ``show_nested``);
        returns its outputs after the update (None: as they are)."""
        plugin_cls = self.registry.get(type_name)
        if not issubclass(plugin_cls, NestedStackResource) or properties is None:
            return None
        if kind == "unchanged":
            if show_nested and child is not None:
                self._all_of(child, "unchanged", result, name)
            return None
        into = result if show_nested else {kind: [] for kind in KINDS}
        if kind == "updated" and child is not None:
            child_def = self._child_definition(plugin_cls, name, type_name, properties, parent,
                                               child.nested_depth, child.name, row)
            return self._diff(child, child.name, child_def, into, show_nested, name)
        if show_nested and child is not None:
            self._all_of(child, "deleted", result, name)
        depth = (stack.nested_depth if stack else 0) + 1
        child_name = f"{stack_name}-{name}"
        child_def = self._child_definition(plugin_cls, name, type_name, properties, parent,
                                           depth, child_name)
        return self._diff(None, child_name, child_def, into, show_nested, name)

    def _all_of(self, stack, kind, result, parent_resource):
        """Every current resource of ``stack`` and of its nested stacks, as ``kind``."""
        children = {child.owner_resource: child for child in self.db.list_children(stack.id)
                    if child.deleted_at is None}
        for row in self.db.list_resources(stack.id):
            result[kind].append(_entry(row.name, row.type, stack.name, row=row,
                                       parent_resource=parent_resource))
            if row.name in children:
                self._all_of(children[row.name], kind, result, row.name)


def _resolve(definition, name, get_resource, get_attr):
    """The resource's properties, or None when they cannot be resolved yet."""
    try:
        return definition.resolve_properties(name, get_resource=get_resource,
                                             get_attr=get_attr)
    except (exceptions.NestedflowError, KeyError, IndexError, TypeError, ValueError):
        return None


def _entry(name, type_name, stack_name, row=None, properties=None, required_by=(),
           parent_resource=None):
    """A resource as Heat's ``format_stack_resource`` names its fields."""
    entry = {
        "resource_name": name,
        "resource_type": type_name,
        "physical_resource_id": (row.physical_id or "") if row is not None else "",
        "resource_action": row.action if row is not None else states.INIT,
        "resource_status": row.status if row is not None else states.COMPLETE,
        "resource_status_reason": row.status_reason if row is not None else "",
        "stack_name": stack_name,
        "required_by": list(required_by),
        "properties": (dict(row.properties_data or {}) if row is not None and properties is None
                       else properties),
    }
    if parent_resource is not None:
        entry["parent_resource"] = parent_resource
    return entry

