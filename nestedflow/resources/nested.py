"""Resources that are stacks: ``OS::Heat::Stack``, template resources, ResourceGroup.

Each child is a stack of its own, created with rollback disabled (the
parent drives rollback), run as its own traversal, and waited for through
completion notifications (see :mod:`nestedflow.stacks.children`).
"""

import abc
import copy
import hashlib
import json
import uuid

from nestedflow import exceptions, states
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base
from nestedflow.template import loader


def child_stack_id(create_key):
    """The child's id follows from the parent's create key: a re-run finds it.

    Here, below ``stacks``, because the resource names its physical id
    before :class:`nestedflow.stacks.children.ChildStacks` makes the child."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"nestedflow-child:{create_key}"))


class NestedStackResource(base.Resource):
    """A resource whose physical object is a child stack (its physical id)."""

    dynamic_attributes = True
    waits_for_stacks = True
    #: An update is the child stack's own update to the new template, which
    #: converges whatever an interrupted one left: resumed in place, not
    #: replaced -- as Heat, whose StackResource._needs_update always issues
    #: the nested update (heat/engine/resources/stack_resource.py). A
    #: conductor cut off mid-update used to replace whole nested trees.
    update_resumable = True
    #: ResourceGroup names members by index: errors read ``resources[2]``.
    indexed_members = False

    @abc.abstractmethod
    def child_template(self, properties, files):
        """(template dict, parameters, files) of the child for ``properties``."""

    @classmethod
    def fingerprint(cls, properties, files, type_name):
        """Digest of what the child is built from beyond the properties: the
        files it can read (loader.files_reached) -- its template file and
        whatever ``get_file`` inside it reads, at any depth -- so a changed
        file updates the children that read it and no other. (The inherited
        environment: stacks.changes.fingerprint.)"""
        files = files or {}
        reached = loader.files_reached([type_name, properties], files)
        return digest({name: files[name] for name in sorted(reached)})

    def _children(self):
        return self.context.children

    def timeout_minutes(self, properties):
        """The child stack's own timeout; the parent's remaining time caps it."""
        return None

    def _run(self, call, *args):
        try:
            return call(*args)
        except exceptions.NestedStackFailed as failure:
            failure.indexed = self.indexed_members
            raise

    def create(self, adopt_stack_data=None):
        children = self._children()
        files = children.parent_files()
        template, parameters, child_files = self.child_template(self.properties, files)
        self.context.physical_id = child_stack_id(self.context.create_key)
        self._run(children.create, self.name, self.context.create_key, template, parameters,
                  child_files, self.timeout_minutes(self.properties), adopt_stack_data)
        return self.context.physical_id

    def handle_adopt(self, resource_data):
        """A new child stack that adopts the resources of the abandoned one
        (its abandon data are this resource's entry's ``resources``)."""
        return self.create(adopt_stack_data={
            "resources": dict((resource_data or {}).get("resources") or {})})

    def update(self, new_properties, old_properties):
        children = self._children()
        files = children.parent_files()
        template, parameters, child_files = self.child_template(new_properties, files)
        self._run(children.update, self.physical_id, template, parameters, child_files)
        self.properties = new_properties

    def delete(self):
        child_id = self.physical_id or child_stack_id(self.context.create_key)
        self._run(self._children().delete, child_id)

    def check(self):
        child = self._children().get(self.physical_id) if self.physical_id else None
        if child is None or child.deleted_at is not None:
            raise exceptions.PhysicalObjectMissing(self.name, self.physical_id)
        self._run(self._children().act, self.physical_id, states.CHECK)

    def suspend(self):
        self._run(self._children().act, self.physical_id, states.SUSPEND)

    def resume(self):
        self._run(self._children().act, self.physical_id, states.RESUME)

    def member_attributes(self, type_name, files):
        """Attribute names of a member of type ``type_name`` (a group's)."""
        type_name = self.context.children.resolve_type(type_name, self.name)
        if type_name in files:
            return sorted(loader.load(files[type_name]).get("outputs") or {})
        plugin = self.context.children.registry.get(type_name)
        return sorted(plugin.attributes_schema or {})

    def outputs(self):
        child = self._children().get(self.physical_id) if self.physical_id else None
        return dict(child.outputs or {}) if child is not None else {}

    def get_attribute(self, name):
        outputs = self.outputs()
        if name == "outputs":
            return outputs
        if name.startswith("outputs."):
            return outputs.get(name[len("outputs."):])
        return outputs.get(name)


def digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


class StackResource(NestedStackResource):
    """``OS::Heat::Stack``: a child stack from an inline template."""

    properties_schema = {
        "template": Property(Types.ANY, "The child template (a map or YAML text).",
                             required=True, update_allowed=True),
        "parameters": Property(Types.MAP, "Parameters of the child stack.",
                               default={}, update_allowed=True),
        "timeout": Property(Types.NUMBER, "Child stack timeout in minutes.",
                            update_allowed=True),
        # Heat creates the child in another region or cloud; nestedflow has
        # one, so the context is accepted (templates carry it) and the
        # child is created here.
        "context": Property(
            Types.MAP, "Heat's remote-stack context; the child is always created by "
            "this engine.", update_allowed=True,
            schema={"region_name": Property(Types.STRING),
                    "credential_secret_id": Property(Types.STRING),
                    "ca_cert": Property(Types.STRING),
                    "ssl_insecure": Property(Types.BOOLEAN, default=False)}),
    }
    attributes_schema = {"outputs": Attribute("The child stack's outputs (a map).")}

    def timeout_minutes(self, properties):
        return properties.get("timeout")

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """The inline template is validated with the parent, nesting depth
        included, so a too-deep chain is refused before anything is stored."""
        check_inline = getattr(getattr(type_lookup, "__self__", None), "check_inline", None)
        if check_inline is not None:
            check_inline(properties.get("template"), f"{path}.template")

    def child_template(self, properties, files):
        template = properties["template"]
        if isinstance(template, str):
            template = loader.load(template)
        return template, dict(properties.get("parameters") or {}), files


class TemplateResource(NestedStackResource):
    """``type: child.yaml``: the file is the child template, properties its parameters."""

    properties_schema = None

    def child_template(self, properties, files):
        name = self.context.type_name
        if name not in files:
            raise exceptions.StackValidationFailed(
                f"template {name!r} is not in the files map", path=f"resources.{self.name}.type")
        params = {k: v for k, v in properties.items() if v is not None}
        return loader.load(files[name], name=name), params, files


class ResourceGroup(NestedStackResource):
    """``OS::Heat::ResourceGroup``: ``count`` copies of ``resource_def`` in a child stack."""

    indexed_members = True
    properties_schema = {
        "count": Property(Types.INTEGER, "Number of members.", default=1, update_allowed=True,
                          constraints=[constraints.Range(0, 1000)]),
        "index_var": Property(Types.STRING, "Replaced by each member's index.",
                              default="%index%"),
        "resource_def": Property(
            Types.MAP, "The member definition.", required=True, update_allowed=True,
            schema={
                "type": Property(Types.STRING, required=True),
                "properties": Property(Types.MAP, default={}),
                "metadata": Property(Types.MAP, default={}),
            }),
        "removal_policies": Property(
            Types.LIST, "Members to remove first (and never reuse), by name.",
            default=[], update_allowed=True,
            schema=Property(Types.MAP, schema={"resource_list": Property(Types.LIST)})),
    }
    attributes_schema = {
        "refs": Attribute("The members' reference ids, in index order."),
        "refs_map": Attribute("Member name -> reference id."),
        "attributes": Attribute("Attribute name -> {member: value}."),
        "removed_rsrc_list": Attribute("Members removed by removal_policies."),
    }

    def _removed(self, properties):
        removed = set(self.context.data.get("removed") or [])
        for policy in properties.get("removal_policies") or []:
            removed.update(str(name) for name in policy.get("resource_list") or [])
        return removed

    def members(self, properties):
        removed = self._removed(properties)
        names, index = [], 0
        while len(names) < properties.get("count", 1):
            if str(index) not in removed:
                names.append(str(index))
            index += 1
        self.context.data["removed"] = sorted(removed, key=_index_order)
        return names

    def child_template(self, properties, files):
        definition = properties["resource_def"]
        index_var = properties.get("index_var") or "%index%"
        members = self.members(properties)
        member_attributes = self.member_attributes(definition["type"], files)
        resources, outputs = {}, {}
        for name in members:
            member = {"type": definition["type"],
                      "properties": _substitute(definition.get("properties") or {},
                                                index_var, name)}
            if definition.get("metadata"):
                member["metadata"] = _substitute(definition["metadata"], index_var, name)
            resources[name] = member
            outputs[f"ref.{name}"] = {"value": {"get_resource": name}}
            for attr in member_attributes:
                outputs[f"attr.{name}.{attr}"] = {"value": {"get_attr": [name, attr]}}
        template = {"heat_template_version": "2021-04-16", "resources": resources,
                    "outputs": outputs}
        return template, {}, files

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """The member type must exist (and a member template must validate).

        With ``count: 0`` there is no member to check: Heat validates only
        the members that exist (ResourceGroup.validate builds the nested
        template of the current count).
        """
        if properties.get("count") == 0:
            return
        definition = properties.get("resource_def") or {}
        member_type = definition.get("type")
        if isinstance(member_type, str):
            try:
                type_lookup(member_type)
            except exceptions.UnknownResourceType as error:
                raise exceptions.UnknownResourceType(
                    member_type, path=f"{path}.resource_def.type") from error

    def get_attribute(self, name):
        outputs = self.outputs()
        members = sorted({key.split(".")[1] for key in outputs if key.startswith("ref.")},
                         key=_index_order)
        if name == "refs":
            return [outputs.get(f"ref.{m}") for m in members]
        if name == "refs_map":
            return {m: outputs.get(f"ref.{m}") for m in members}
        if name == "removed_rsrc_list":
            return list(self.context.data.get("removed") or [])
        if name == "attributes":
            attrs = {}
            for key, value in outputs.items():
                if key.startswith("attr."):
                    _, member, attr = key.split(".", 2)
                    attrs.setdefault(attr, {})[member] = value
            return attrs
        if name.startswith("resource."):
            _, member, *rest = name.split(".", 2)
            if not rest:
                return outputs.get(f"ref.{member}")
            return outputs.get(f"attr.{member}.{rest[0]}")
        if members and f"attr.{members[0]}.{name}" not in outputs:
            # Heat asks each member (grouputils.get_rsrc_attr); the first
            # refuses an attribute its type does not have.
            raise exceptions.InvalidTemplateAttribute(members[0], name)
        return [outputs.get(f"attr.{m}.{name}") for m in members]


def _index_order(name):
    return (0, int(name)) if str(name).isdigit() else (1, str(name))


def _substitute(snippet, index_var, index):
    """Replace ``%index%`` in every string of the member definition."""
    if isinstance(snippet, str):
        return snippet.replace(index_var, index)
    if isinstance(snippet, list):
        return [_substitute(item, index_var, index) for item in snippet]
    if isinstance(snippet, dict):
        return {key: _substitute(value, index_var, index) for key, value in snippet.items()}
    return copy.deepcopy(snippet)
