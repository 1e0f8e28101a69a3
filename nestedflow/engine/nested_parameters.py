"""Heat's ``NestedParameters``: what ``validate_template`` with
``show_nested`` adds -- the parameters of every nested stack the template
would make, recursively.

Follows heat/engine/stack.py ``Stack.get_nested_parameters``: for each
resource whose type makes a nested stack (a template resource, an
``OS::Heat::Stack`` with its template given inline, an
``OS::Heat::ResourceGroup``, whose nested stack Heat validates as a group
of one member named ``0``), an entry keyed by the resource's name with the
type as written, the nested template's description and its parameters in
``format_validate_parameter``'s shape (a ``Value`` where the resource's
properties give one that is known before anything runs), then the nested
stack's own ``NestedParameters``. The key is left out when there are none.
"""

from nestedflow.properties.schema import UNRESOLVED
from nestedflow.stacks.types import PSEUDO_PARAMETERS, has_unresolved
from nestedflow.template import environment as env_module
from nestedflow.template import functions, loader
from nestedflow.template.template import Template, is_template_file_type

#: The version of the template Heat builds for a group's nested stack
#: (heat/engine/resources/openstack/heat/resource_group.py ``_assemble_nested``).
_GROUP_TEMPLATE_VERSION = "2015-04-30"


def nested_parameters(tmpl, parameters, describe):
    """``{"NestedParameters": {...}}`` of ``tmpl`` (a validated Template)
    resolved with ``parameters``, or ``{}``; ``describe(child, name,
    given)`` formats one parameter of a nested template."""
    ctx = tmpl.context(parameters, get_resource=lambda name: UNRESOLVED,
                       get_attr=lambda name, attr, path: UNRESOLVED)
    raw = tmpl.raw.get("resources") or {}
    found = {}
    for name, definition in tmpl.resources.items():
        properties = functions.resolve(definition.properties, ctx, f"resources.{name}")
        child = _nested_template(tmpl, name, definition.type, properties)
        if child is None:
            continue
        source, given = child
        nested = Template(loader.load(source, name=name), files=tmpl.files,
                          environment=env_module.child_environment(tmpl.environment, name))
        given = {key: value for key, value in (given or {}).items()
                 if not has_unresolved(value)}
        entry = {"Type": (raw.get(name) or {}).get("type", definition.type),
                 "Description": nested.description or "No description",
                 "Parameters": {p: describe(nested, p, given) for p in nested.parameters}}
        if nested.parameter_groups:
            entry["ParameterGroups"] = nested.parameter_groups
        # Deeper down, values come from properties known only at run time.
        unknown = dict.fromkeys((*nested.parameters, *PSEUDO_PARAMETERS), UNRESOLVED)
        nested.apply_conditions(unknown)
        entry.update(nested_parameters(nested, unknown, describe))
        found[name] = entry
    return {"NestedParameters": found} if found else {}


def _nested_template(tmpl, name, type_name, properties):
    """``(template source, parameter values)`` of the nested stack resource
    ``name`` makes, or None when it makes none known before it runs."""
    if is_template_file_type(type_name):
        return (tmpl.files[type_name], properties) if type_name in tmpl.files else None
    if type_name == "OS::Heat::Stack":
        inline = properties.get("template")
        if isinstance(inline, (str, dict)) and not has_unresolved(inline):
            return inline, properties.get("parameters")
        return None
    if type_name == "OS::Heat::ResourceGroup":
        member = properties.get("resource_def")
        if isinstance(member, dict) and isinstance(member.get("type"), str):
            known = {key: value for key, value in (member.get("properties") or {}).items()
                     if not has_unresolved(value)}
            return {"heat_template_version": _GROUP_TEMPLATE_VERSION,
                    "resources": {"0": {"type": member["type"], "properties": known}}}, {}
    return None
