"""Resource type lookup while validating: template resources are checked
against the template file they name, recursively, before anything is stored."""

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.resources.nested import TemplateResource
from nestedflow.resources.schema import UNRESOLVED, Attribute, Property, Types
from nestedflow.template import loader, validator
from nestedflow.template.template import Template, is_template_file_type


class ValidatingTypes:
    def __init__(self, registry, files, depth=0, chain=()):
        self._registry = registry
        self._files = files or {}
        self._depth = depth
        self._chain = chain
        self._cache = {}

    def get(self, type_name):
        if not is_template_file_type(type_name):
            return self._registry.get(type_name)
        if type_name not in self._cache:
            self._cache[type_name] = self._template_type(type_name)
        return self._cache[type_name]

    def _template_type(self, type_name):
        chain = (*self._chain, type_name)
        if type_name in self._chain:
            raise exceptions.StackValidationFailed(
                "template includes itself: " + " -> ".join(chain))
        if type_name not in self._files:
            raise exceptions.UnknownResourceType(type_name)
        limit = CONF.engine.max_nested_stack_depth
        if self._depth + 1 > limit:
            raise exceptions.StackValidationFailed(
                f"{' -> '.join(chain)}: nesting deeper than the maximum of {limit} levels")
        try:
            child = Template(loader.load(self._files[type_name]), files=self._files)
            # The child's parameters come from properties that may only be
            # known at run time: validate its structure with them unresolved.
            params = {name: UNRESOLVED for name in child.parameters}
            inner = ValidatingTypes(self._registry, self._files, self._depth + 1, chain)
            validator.validate(child, params, inner.get)
        except exceptions.StackValidationFailed as error:
            raise exceptions.StackValidationFailed(
                f"in template {type_name}: {error}") from error
        schema = {
            name: Property(Types.ANY, required=not param.has_default)
            for name, param in child.parameters.items()
        }
        attributes = {name: Attribute() for name in child.outputs}
        attributes["OS::stack_id"] = Attribute("The child stack's id.")
        return type(
            "TemplateResource",
            (TemplateResource,),
            {"properties_schema": schema, "attributes_schema": attributes,
             "dynamic_attributes": False},
        )
