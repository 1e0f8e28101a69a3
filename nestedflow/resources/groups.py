"""Heat's groups built on a nested stack of members, like ``ResourceGroup``.

``OS::Heat::ResourceChain`` (heat/engine/resources/openstack/heat/resource_chain.py):
one member per type in ``resources``, named ``0``, ``1``...; each gets
``resource_properties`` and, unless ``concurrent``, depends on the member
before it. ``resources`` updates in place (the chain's stack is updated);
``concurrent`` and ``resource_properties`` replace the chain.

``OS::Heat::SoftwareDeploymentGroup`` / ``StructuredDeploymentGroup``
(software_deployment.py, structured_config.py): one deployment per entry
of ``servers`` (its name -> a server id), named by the entry; attributes
``deploy_stdouts``, ``deploy_stderrs``, ``deploy_status_codes`` and any
member attribute (an output of the config) as a map of member name to value.
``servers`` updates in place (members added or removed); the deployment
properties follow a deployment's update behaviour.
"""

from nestedflow import exceptions
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources.nested import ResourceGroup
from nestedflow.resources.software_deployment import (
    DEPLOY_ATTRIBUTES,
    DEPLOYMENT_SCHEMA,
    StructuredDeployment,
)

#: Types that name a template file (a template resource) are looked up by
#: the member's own stack.
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template")


class _MemberGroup(ResourceGroup):
    """A ResourceGroup whose members the subclass lists and defines."""

    indexed_members = False

    def member_definitions(self, properties):
        """[(name, definition)] of the members, in order."""
        raise NotImplementedError

    def member_attribute_names(self, definitions, files):
        names = set()
        for _, definition in definitions:
            names.update(self.member_attributes(definition["type"], files))
        return sorted(names)

    def members(self, properties):
        return [name for name, _ in self.member_definitions(properties)]

    def child_template(self, properties, files):
        definitions = self.member_definitions(properties)
        attributes = self.member_attribute_names(definitions, files)
        resources, outputs = {}, {}
        for name, definition in definitions:
            resources[name] = definition
            outputs[f"ref.{name}"] = {"value": {"get_resource": name}}
            for attr in attributes:
                outputs[f"attr.{name}.{attr}"] = {"value": {"get_attr": [name, attr]}}
        return ({"heat_template_version": "2021-04-16", "resources": resources,
                 "outputs": outputs}, {}, files)

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        pass


class ResourceChain(_MemberGroup):
    """One member per type in ``resources`` (named ``0``, ``1``...), each with
    ``resource_properties`` and, unless ``concurrent``, created after the
    one before it, in a nested stack of its own."""

    properties_schema = {
        "resources": Property(Types.LIST, "The list of resource types to create.",
                              required=True, update_allowed=True,
                              schema=Property(Types.STRING)),
        "concurrent": Property(Types.BOOLEAN, "If true, the resources in the chain will be "
                               "created concurrently.", default=False),
        "resource_properties": Property(Types.MAP, "Properties to pass to each resource "
                                        "being created in the chain."),
    }
    attributes_schema = {
        "refs": Attribute("A list of resource IDs for the resources in the chain.",
                          Types.LIST),
        "refs_map": Attribute("A map of resource names to IDs for the resources in the "
                              "chain.", Types.MAP),
        "attributes": Attribute("A map of resource names to the specified attribute of "
                                "each individual resource.", Types.MAP),
    }

    def member_definitions(self, properties):
        definitions = []
        for index, type_name in enumerate(properties.get("resources") or []):
            definition = {"type": type_name}
            if properties.get("resource_properties"):
                definition["properties"] = dict(properties["resource_properties"])
            if index > 0 and not properties.get("concurrent"):
                definition["depends_on"] = [str(index - 1)]
            definitions.append((str(index), definition))
        return definitions

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """Each type must be known (Heat's ``validate_nested_stack``)."""
        for index, type_name in enumerate(properties.get("resources") or []):
            if isinstance(type_name, str) and not type_name.endswith(_TEMPLATE_SUFFIXES):
                try:
                    type_lookup(type_name)
                except exceptions.UnknownResourceType as error:
                    raise exceptions.UnknownResourceType(
                        type_name, path=f"{path}.resources[{index}]") from error


class SoftwareDeploymentGroup(_MemberGroup):
    """One ``OS::Heat::SoftwareDeployment`` per entry of ``servers`` (name ->
    server id), named by the entry, in a nested stack of its own; the
    ``deploy_*s`` attributes (and any output name) map member names to values."""

    member_type = "OS::Heat::SoftwareDeployment"
    #: The deployment properties every member gets.
    member_properties = ("config", "input_values", "actions", "name", "signal_transport")
    properties_schema = {
        "servers": Property(Types.MAP, "A map of names and server IDs to apply "
                            "configuration to.", required=True, update_allowed=True),
        **{key: DEPLOYMENT_SCHEMA[key] for key in member_properties},
    }
    attributes_schema = {
        "deploy_stdouts": Attribute("A map of names and captured stdouts from the "
                                    "configuration execution to each server.", Types.MAP),
        "deploy_stderrs": Attribute("A map of names and captured stderrs from the "
                                    "configuration execution to each server.", Types.MAP),
        "deploy_status_codes": Attribute("A map of names and returned status code from "
                                         "the configuration execution.", Types.MAP),
    }
    dynamic_attributes = True

    def member_definitions(self, properties):
        shared = {key: properties.get(key) for key in self.member_properties
                  if properties.get(key) is not None}
        return [(str(name), {"type": self.member_type,
                             "properties": {**shared, "server": server}})
                for name, server in (properties.get("servers") or {}).items()]

    def member_attribute_names(self, definitions, files):
        """The deploy_* attributes and every output the config declares."""
        names = set(DEPLOY_ATTRIBUTES)
        config_id = definitions[0][1]["properties"].get("config") if definitions else None
        store = self.context.software_configs
        if config_id and store is not None:
            try:
                document = store.get_config(config_id).config or {}
            except exceptions.SoftwareConfigNotFound:
                document = {}
            names.update(o["name"] for o in document.get("outputs") or [])
        return sorted(names)

    def get_attribute(self, name):
        member_attr = {"deploy_stdouts": "deploy_stdout", "deploy_stderrs": "deploy_stderr",
                       "deploy_status_codes": "deploy_status_code"}.get(name, name)
        outputs = self.outputs()
        members = [key.split(".", 1)[1] for key in outputs if key.startswith("ref.")]
        return {member: outputs.get(f"attr.{member}.{member_attr}") for member in members}


class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """As ``OS::Heat::SoftwareDeploymentGroup``, with
    ``OS::Heat::StructuredDeployment`` members."""

    member_type = "OS::Heat::StructuredDeployment"
    member_properties = (*SoftwareDeploymentGroup.member_properties, "input_key",
                         "input_values_validate")
    properties_schema = {
        **SoftwareDeploymentGroup.properties_schema,
        "input_key": StructuredDeployment.properties_schema["input_key"],
        "input_values_validate":
            StructuredDeployment.properties_schema["input_values_validate"],
    }
