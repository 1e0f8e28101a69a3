"""A stack's template with its parameters resolved: what every traversal works from."""

from nestedflow import exceptions
from nestedflow.properties.schema import StackSummary
from nestedflow.stacks.types import ValidatingTypes
from nestedflow.template import functions, loader, parameters, validator
from nestedflow.template.functions.core import NO_PARENT, facade_of
from nestedflow.template.template import Template

#: In :meth:`StackDefinition.needed_attributes`: every attribute of the resource.
ANY_ATTRIBUTE = "*"


class StackDefinition:
    """Resolves properties, attributes and outputs of one template version."""

    def __init__(self, template, params, registry):
        self.template = template
        self.parameters = params
        self.registry = registry
        self._needed = None
        #: What ``resource_facade`` reads: None while validating (unknown),
        #: NO_PARENT for a top-level stack, else the parent's resource.
        self.facade = None

    @classmethod
    def load(cls, raw, *, files=None, environment=None, params=None, registry,
             stack_id, stack_name, max_size=None, validate=True, depth=0, timeout=None):
        """Parse and (unless re-loading stored state) validate a template.

        Raises StackValidationFailed naming where the problem is; nothing is
        stored before this has passed.
        """
        kwargs = {} if max_size is None else {"max_size": max_size}
        # Stored state (validate=False) passed the structure limits when stored.
        tmpl_dict = loader.load(raw, checked=not validate, **kwargs)
        if isinstance(environment, str):
            environment = loader.load(environment, name="environment", **kwargs)
        template = Template(tmpl_dict, files=files, environment=environment, checked=True)
        pseudo = {
            "OS::stack_name": stack_name,
            "OS::stack_id": stack_id,
            "OS::project_id": "",
        }
        resolved = parameters.resolve_parameters(template, params, pseudo=pseudo)
        # Resources whose condition is false do not exist from here on.
        template.apply_conditions(resolved)
        definition = cls(template, resolved, registry)
        if validate:
            types = ValidatingTypes(registry, template.files, depth,
                                    environment=template.environment)
            summary = StackSummary(stack_name, stack_id, timeout, frozenset(template.resources))
            validator.validate(template, resolved, types.get, stack=summary)
            for name in definition.resources:
                definition.external_id(name)  # refused before anything is stored
        return definition

    @property
    def resources(self):
        return self.template.resources

    def dependencies(self):
        """name -> set of names it requires (depends_on and references)."""
        return self.template.dependencies()

    def output_references(self):
        """Resources the outputs read, or None if an output computes a resource name."""
        names = set()
        for output in self.template.outputs.values():
            if functions.computes_references(output.value):
                return None
            names |= functions.references(output.value)
        return names

    def needed_attributes(self):
        """name -> attribute names some other resource or an output reads.

        A computed resource name may read any resource; a computed attribute
        name, any attribute (:data:`ANY_ATTRIBUTE`).

        Every resource task asks; computed once per definition, as scanning
        the whole template per resource made a stack's run quadratic.
        """
        if self._needed is None:
            self._needed = self._scan_attribute_references()
        return self._needed

    def _scan_attribute_references(self):
        needed = {name: set() for name in self.resources}
        snippets = [d.properties for d in self.resources.values()]
        snippets += [d.metadata for d in self.resources.values()]
        snippets += [o.value for o in self.template.outputs.values()]
        for snippet in snippets:
            for name, attr in functions.attribute_references(snippet):
                if name is None:
                    readers = needed.values()
                else:
                    readers = [needed[name]] if name in needed else []
                for attrs in readers:
                    attrs.add(ANY_ATTRIBUTE if attr is None else attr)
        return needed

    def _context(self, get_resource, get_attr):
        return self.template.context(self.parameters, get_resource=get_resource,
                                     get_attr=get_attr, facade=self.facade)

    def resolve_properties(self, name, get_resource, get_attr):
        """The properties of resource ``name``, functions resolved and validated."""
        definition = self.resources[name]
        path = f"resources.{name}.properties"
        values = functions.resolve(
            definition.properties or {}, self._context(get_resource, get_attr), path=path
        )
        return self.registry.get(definition.type).checked_properties(name, values, path)

    def external_id(self, name):
        """The id resource ``name`` adopts (Heat's ``external_id``), or None.

        It may use parameters (``get_param``), not other resources."""
        definition = self.resources.get(name)
        snippet = getattr(definition, "external_id", None)
        if snippet is None:
            return None
        path = f"resources.{name}.external_id"

        def no_reference(*args):
            raise exceptions.StackValidationFailed(
                "external_id cannot refer to other resources", path=path)

        value = functions.resolve(snippet, self._context(no_reference, no_reference), path=path)
        if not isinstance(value, str) or not value:
            raise exceptions.StackValidationFailed(
                f"external_id must be a non-empty string, got {value!r}", path=path)
        return value

    def resolve_outputs(self, get_resource, get_attr):
        """Output values; one that cannot be resolved is None (as in Heat)."""
        return self.resolve_outputs_and_errors(get_resource, get_attr)[0]

    def resolve_outputs_and_errors(self, get_resource, get_attr):
        """``(values, errors)``: an output that cannot be resolved has the value
        None and, in ``errors``, the reason (Heat's ``output_error``); the
        stack does not fail for it."""
        outputs, errors = {}, {}
        ctx = self._context(get_resource, get_attr)
        for name, output in self.template.outputs.items():
            try:
                outputs[name] = functions.resolve(output.value, ctx, path=f"outputs.{name}")
            except (exceptions.NestedflowError, KeyError, IndexError, TypeError, ValueError) as e:
                outputs[name] = None
                errors[name] = str(e)
        return outputs, errors


def load_definition(db, registry, stack, template_id):
    """The definition of ``stack``'s stored template version ``template_id``
    (validated when it was stored, so not again)."""
    raw = db.get_template(template_id)
    definition = StackDefinition.load(
        raw.template,
        files=raw.files,
        environment=raw.environment,
        params=raw.parameters,
        registry=registry,
        stack_id=stack.id,
        stack_name=stack.name,
        validate=False,
    )
    parent_id = getattr(stack, "parent_id", None)
    owner = getattr(stack, "owner_resource", None)
    definition.facade = ParentFacade(db, registry, parent_id, owner) if parent_id else NO_PARENT
    return definition


class ParentFacade:
    """``resource_facade``'s view of the resource that owns a nested stack:
    its metadata, deletion_policy and update_policy, read from the parent's
    current template on first use (Heat: ``stack.parent_resource``)."""

    def __init__(self, db, registry, parent_id, resource_name):
        self._db = db
        self._registry = registry
        self._parent_id = parent_id
        self._resource_name = resource_name
        self._values = None

    def get(self, key):
        if self._values is None:
            self._values = self._load()
        return self._values.get(key)

    def _load(self):
        parent = self._db.get_stack(self._parent_id)
        parent_definition = load_definition(self._db, self._registry, parent,
                                            parent.raw_template_id)
        resource = parent_definition.resources.get(self._resource_name)
        if resource is None:  # a group member: its definition is the group's
            return {"metadata": {}, "deletion_policy": "Delete", "update_policy": {}}
        values = facade_of(resource)
        ctx = parent_definition.template.context(parent_definition.parameters)
        try:
            values["metadata"] = functions.resolve(values["metadata"], ctx)
            values["update_policy"] = functions.resolve(values["update_policy"], ctx)
        except exceptions.NestedflowError:
            pass  # reads other resources: Heat's metadata_get would too; keep it raw
        return values
