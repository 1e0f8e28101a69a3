"""Resource type lookup while validating: template resources are checked
against the template file they name, recursively, before anything is stored."""

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.properties.schema import UNRESOLVED, Attribute, Property, Types
from nestedflow.resources.nested import TemplateResource
from nestedflow.template import environment as env_module
from nestedflow.template import loader, validator
from nestedflow.template.template import Template, is_template_file_type

#: Set for every stack at run time (see StackDefinition.load).
PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")


class ValidatingTypes:
    """``environment`` is the stack's: nested templates and group members
    are checked with the child environment Heat would give them."""

    def __init__(self, registry, files, depth=0, chain=(), environment=None):
        self._registry = registry
        self._files = files or {}
        self._depth = depth
        self._chain = chain
        self._cache = {}
        self._environment = environment or {}
        self._child_env = env_module.child_environment(self._environment)

    def get(self, type_name):
        # Resource types arrive mapped already; a group's member type does
        # not (mapping is idempotent, so map always).
        type_name = env_module.resolve_type(
            self._child_env["resource_registry"], type_name)
        if not is_template_file_type(type_name):
            return self._registry.get(type_name)
        if type_name not in self._cache:
            self._cache[type_name] = self._template_type(type_name)
        return self._cache[type_name]

    def check_inline(self, template, path):
        """Validate an inline child template (``OS::Heat::Stack``'s
        ``template`` property) as its stack would be, depth limit included,
        before anything is stored (Heat: StackResource.validate_nested_stack
        raises RecursionDepthExceeded while validating the parent)."""
        if not isinstance(template, (str, dict)) or has_unresolved(template):
            return  # known only at run time (checked then, before the child is stored)
        self._validate_child(template, (*self._chain, path), path)

    def _validate_child(self, source, chain, label):
        limit = CONF.engine.max_nested_stack_depth
        if self._depth + 1 > limit:
            raise exceptions.StackValidationFailed(
                f"{' -> '.join(chain)}: nesting deeper than the maximum of {limit} levels")
        try:
            child = Template(loader.load(source, name=label),
                             files=self._files, environment=self._child_env)
            # The child's parameters come from properties that may only be
            # known at run time: validate its structure with them unresolved.
            params = {name: UNRESOLVED for name in (*child.parameters, *PSEUDO_PARAMETERS)}
            inner = ValidatingTypes(self._registry, self._files, self._depth + 1, chain,
                                    self._child_env)
            # Expand ifs (conditions that need a parameter stay undecided).
            child.apply_conditions(params)
            validator.validate(child, params, inner.get)
        except exceptions.StackValidationFailed as error:
            raise exceptions.StackValidationFailed(
                f"in template {label}: {error}") from error
        return child

    def _template_type(self, type_name):
        chain = (*self._chain, type_name)
        if type_name in self._chain:
            raise exceptions.StackValidationFailed(
                "template includes itself: " + " -> ".join(chain))
        if type_name not in self._files:
            raise exceptions.UnknownResourceType(type_name)
        child = self._validate_child(self._files[type_name], chain, type_name)
        # A parameter_defaults entry makes the property optional, as in
        # Heat's generate_class_from_template.
        defaults = self._child_env["parameter_defaults"]
        schema = {
            name: Property(Types.ANY, required=not param.has_default and name not in defaults)
            for name, param in child.parameters.items()
        }
        attributes = {name: Attribute() for name in child.outputs}
        attributes["OS::stack_id"] = Attribute("The child stack's id.")
        return type(
            "TemplateResource",
            (TemplateResource,),
            {"properties_schema": schema, "attributes_schema": attributes,
             # Any name: an output the child no longer has reads as None, as
             # in Heat (TemplateResource overrides get_attribute).
             "dynamic_attributes": True},
        )


def has_unresolved(value):
    if value is UNRESOLVED:
        return True
    if isinstance(value, dict):
        return any(has_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unresolved(v) for v in value)
    return False
