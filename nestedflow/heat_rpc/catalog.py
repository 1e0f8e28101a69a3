"""Heat's template, resource-type and service methods: what the engine
accepts, answered from its plugin registry and template versions."""

import importlib.metadata
import inspect
import re

from nestedflow import exceptions
from nestedflow.heat_rpc import faults
from nestedflow.heat_rpc.calls import Calls, rpc
from nestedflow.heat_rpc.stacks import split_params
from nestedflow.template.functions import versions

_HOT = "heat_template_version."

#: Heat's ``show`` attribute every resource type has (heat/engine/resource.py
#: ``base_attributes_schema``).
_SHOW = {"description": "Detailed information about resource.", "type": "map"}

#: Property type -> HOT parameter type (heat/engine/parameters.py via
#: properties.Property's ``_param_type_map``) and CFN's.
_PARAM_TYPES = {"string": "string", "integer": "number", "number": "number",
                "boolean": "boolean", "map": "json", "list": "comma_delimited_list",
                "any": "json"}
_CFN_TYPES = {"string": "String", "number": "Number", "boolean": "Boolean",
              "json": "Json", "comma_delimited_list": "CommaDelimitedList"}

#: The date version generate_template writes (Heat's resource_to_template).
_GENERATED_HOT_VERSION = "2016-10-14"


def _constraint(constraint):
    result = {"description": constraint.description}
    key = constraint.key
    if key in ("length", "range"):
        result[key] = {bound: getattr(constraint, bound) for bound in ("min", "max")
                       if getattr(constraint, bound) is not None}
    elif key == "allowed_values":
        result[key] = list(constraint.values)
    elif key == "allowed_pattern":
        result[key] = constraint.pattern
    elif key == "modulo":
        result[key] = {"step": constraint.step, "offset": constraint.offset}
    elif key == "custom_constraint":
        result[key] = constraint.name
    return result


def property_schema(prop):
    """Heat's ``dict(properties.Schema)``."""
    result = {"type": prop.type if prop.type != "any" else "any",
              "description": prop.description,
              "required": prop.required,
              "update_allowed": prop.update_allowed,
              "immutable": False}
    if prop.default is not None:
        result["default"] = prop.default
    if prop.constraints:
        result["constraints"] = [_constraint(c) for c in prop.constraints]
    if prop.schema is not None:
        if prop.type == "list":
            result["schema"] = {"*": property_schema(prop.schema)}
        else:
            result["schema"] = {name: property_schema(p) for name, p in prop.schema.items()}
    return result


def _parameter(prop, cfn=False):
    kind = _PARAM_TYPES.get(prop.type, "string")
    if cfn:
        result = {"Type": _CFN_TYPES[kind], "Description": prop.description}
        if prop.default is not None:
            result["Default"] = prop.default
        return result
    result = {"type": kind, "description": prop.description}
    if prop.default is not None:
        result["default"] = prop.default
    return result


class CatalogCalls(Calls):
    """Template validation and versions, resource types, services."""

    def _plugin(self, type_name):
        try:
            return self.engine.registry.get(type_name)
        except exceptions.StackValidationFailed:
            raise faults.entity_not_found("Resource Type", type_name) from None

    @rpc
    def validate_template(self, ctxt, template, params=None, files=None,
                          environment_files=None, files_container=None, show_nested=False,
                          ignorable_errors=None):
        try:
            parameters, environment = split_params(params, files, environment_files)
            result = self.engine.validate_template(template, files=files or None,
                                                   environment=environment,
                                                   parameters=parameters,
                                                   show_nested=bool(show_nested),
                                                   ignorable_errors=ignorable_errors,
                                                   context=ctxt)
        except exceptions.StackValidationFailed as error:
            fault = faults.translate(error)
            if type(fault).__name__ == "InvalidTemplateVersion":
                raise fault from None  # heat-engine raises this one
            # heat-engine answers an invalid template, not an error; heat-api
            # turns it into 400 (heat/api/openstack/v1/stacks.py validate_template).
            return {"Error": str(fault)}
        result["Environment"] = _user_environment(result.get("Environment"), template, files,
                                                  parameters)
        return result

    @rpc
    def list_template_versions(self, ctxt):
        aliases = {}
        for name, version in versions.RELEASE_NAMES.items():
            aliases.setdefault(version, []).append(_HOT + name)
        return [{"version": _HOT + version, "type": "hot",
                 "aliases": aliases.get(version, [])} for version in versions.HOT_VERSIONS]

    @rpc
    def list_template_functions(self, ctxt, template_version, with_condition=False):
        version = template_version.removeprefix(_HOT)
        version = versions.RELEASE_NAMES.get(version, version)
        if not template_version.startswith(_HOT) or version not in versions.HOT_VERSIONS:
            raise faults.not_found(f"Template with version {template_version} not found")
        return [{"functions": name, "description": versions.DESCRIPTIONS.get(name, "")}
                for name in versions.available(version, with_conditions=bool(with_condition))]

    @rpc
    def list_resource_types(self, ctxt, support_status=None, type_name=None,
                            heat_version=None, with_description=False):
        names = self.engine.registry.names()
        if support_status not in (None, "SUPPORTED"):
            names = []
        if type_name is not None:
            names = [name for name in names if _matches(type_name, name)]
        if with_description:
            return [{"resource_type": name,
                     "description": inspect.cleandoc(self.engine.registry.get(name).__doc__ or "")}
                    for name in names]
        return names

    @rpc
    def resource_schema(self, ctxt, type_name, with_description=False):
        plugin = self._plugin(type_name)
        attributes = {name: {"description": attr.description, "type": attr.type}
                      for name, attr in plugin.attributes_schema.items()}
        attributes.setdefault("show", dict(_SHOW))
        result = {
            "resource_type": type_name,
            "properties": {name: property_schema(prop)
                           for name, prop in plugin.properties_schema.items()},
            "attributes": attributes,
            "support_status": {"status": "SUPPORTED", "message": None, "version": None,
                               "previous_status": None},
        }
        if with_description:
            result["description"] = inspect.cleandoc(plugin.__doc__ or "")
        return result

    @rpc
    def generate_template(self, ctxt, type_name, template_type="cfn"):
        """Heat's ``Resource.resource_to_template``: a parameter per property,
        the resource, an output per attribute."""
        plugin = self._plugin(type_name)
        cfn = template_type != "hot"
        name = type_name.split("::")[-1]
        props = plugin.properties_schema
        attrs = dict(plugin.attributes_schema)
        if cfn:
            return {
                "HeatTemplateFormatVersion": "2012-12-12",
                "Description": f"Initial template of {name}",
                "Parameters": {p: _parameter(prop, cfn=True) for p, prop in props.items()},
                "Resources": {name: {"Type": type_name,
                                     "Properties": {p: {"Ref": p} for p in props}}},
                "Outputs": {a: {"Description": attr.description,
                                "Value": {"Fn::GetAtt": [name, a]}}
                            for a, attr in attrs.items()},
            }
        return {
            "heat_template_version": _GENERATED_HOT_VERSION,
            "description": f"Initial template of {name}",
            "parameters": {p: _parameter(prop) for p, prop in props.items()},
            "resources": {name: {"type": type_name,
                                 "properties": {p: {"get_param": p} for p in props}}},
            "outputs": {a: {"description": attr.description,
                            "value": {"get_attr": [name, a]}} for a, attr in attrs.items()},
        }

    @rpc
    def get_revision(self, ctxt):
        try:
            return f"nestedflow {importlib.metadata.version('nestedflow')}"
        except importlib.metadata.PackageNotFoundError:
            return "nestedflow"

    @rpc
    def list_services(self, ctxt):
        """Every engine's heartbeat, as heat-engine's ``service_utils.format_service``
        of its ``service`` rows (:mod:`nestedflow.engine.services`)."""
        return self.engine.list_services(context=ctxt)


def _user_environment(environment, template, files, parameters):
    """Heat's ``Environment.user_env_as_dict()``: the registry always has
    ``resources``, and names each template file the template uses as a type
    (heat/engine/environment.py ``ResourceRegistry.as_dict``); ``event_sinks``."""
    environment = dict(environment or {})
    registry = dict(environment.get("resource_registry") or {})
    registry.setdefault("resources", {})
    template = template if isinstance(template, dict) else {}
    for definition in (template.get("resources") or {}).values():
        kind = definition.get("type") if isinstance(definition, dict) else None
        if isinstance(kind, str) and (kind in (files or {}) or kind.endswith(
                (".yaml", ".yml", ".template"))):
            registry.setdefault(kind, kind)
    environment["resource_registry"] = registry
    environment["parameters"] = dict(environment.get("parameters") or parameters or {})
    environment.setdefault("parameter_defaults", {})
    environment.setdefault("event_sinks", [])
    return environment


def _matches(pattern, name):
    """Heat's type filter (heat/engine/environment.py ``get_types``): a regular
    expression matched at the start of the name."""
    try:
        return re.match(pattern, name) is not None
    except re.error:
        return False
