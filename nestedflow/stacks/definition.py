"""A stack's template with its parameters resolved: what every traversal works from."""

from nestedflow import exceptions
from nestedflow.resources import schema
from nestedflow.stacks.types import ValidatingTypes
from nestedflow.template import functions, loader, parameters, validator
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

    @classmethod
    def load(cls, raw, *, files=None, environment=None, params=None, registry,
             stack_id, stack_name, max_size=None, validate=True, depth=0):
        """Parse and (unless re-loading stored state) validate a template.

        Raises StackValidationFailed naming where the problem is; nothing is
        stored before this has passed.
        """
        kwargs = {} if max_size is None else {"max_size": max_size}
        tmpl_dict = loader.load(raw, **kwargs)
        if isinstance(environment, str):
            environment = loader.load(environment, **kwargs)
        template = Template(tmpl_dict, files=files, environment=environment)
        pseudo = {
            "OS::stack_name": stack_name,
            "OS::stack_id": stack_id,
            "OS::project_id": "",
        }
        resolved = parameters.resolve_parameters(template, params, pseudo=pseudo)
        definition = cls(template, resolved, registry)
        if validate:
            types = ValidatingTypes(registry, template.files, depth)
            validator.validate(template, resolved, types.get)
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
        return functions.ResolveContext(
            parameters=self.parameters,
            files=self.template.files or {},
            get_resource=get_resource,
            get_attr=get_attr,
        )

    def resolve_properties(self, name, get_resource, get_attr):
        """The properties of resource ``name``, functions resolved and validated."""
        definition = self.resources[name]
        path = f"resources.{name}.properties"
        values = functions.resolve(
            definition.properties or {}, self._context(get_resource, get_attr), path=path
        )
        plugin = self.registry.get(definition.type)
        if plugin.properties_schema is None:
            return values
        return schema.validate_properties(plugin.properties_schema, values, path)

    def resolve_outputs(self, get_resource, get_attr):
        """Output values; one that cannot be resolved is None (as in Heat)."""
        outputs = {}
        ctx = self._context(get_resource, get_attr)
        for name, output in self.template.outputs.items():
            try:
                outputs[name] = functions.resolve(output.value, ctx, path=f"outputs.{name}")
            except (exceptions.NestedflowError, KeyError, IndexError, TypeError, ValueError):
                outputs[name] = None
        return outputs

