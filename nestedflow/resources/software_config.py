"""Heat's config types: stored, immutable configs in the software-config store.

``OS::Heat::SoftwareConfig``, ``StructuredConfig``, ``CloudConfig``,
``MultipartMime`` and ``SoftwareComponent``, as
heat/engine/resources/openstack/heat/software_config.py,
structured_config.py, cloud_config.py, multi_part.py and
software_component.py: each create stores one config (named by Heat's
``<stack>-<resource>-<short id>``) through the store
:mod:`nestedflow.engine.software_config` serves; the physical id is the
config's id, so ``get_resource`` hands it to a deployment or a server's
``user_data``. No property allows an update (a config is immutable): any
change makes a new config and deletes the old one. Attribute ``config``
(``configs`` for a component) reads the stored config.

The config's id is derived from the action's idempotency key: a create
run again after a crash finds the config its first run stored.
"""

import email
import os
import uuid
from email.mime import multipart, text

import yaml

from nestedflow import exceptions
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base
from nestedflow.resources import software_config_io as swc_io
from nestedflow.resources import software_records as swc

#: Heat's ``SoftwareConfig.properties_schema``.
CONFIG_SCHEMA = {
    "group": Property(Types.STRING, "Namespace to group this software config by when "
                      "delivered to a server.", default="Heat::Ungrouped"),
    "config": Property(Types.STRING, "Configuration script or manifest which specifies "
                       "what actual configuration is performed."),
    "options": Property(Types.MAP, "Map containing options specific to the configuration "
                        "management tool used by this resource."),
    "inputs": Property(Types.LIST, "Schema representing the inputs that this software "
                       "config is expecting.",
                       schema=Property(Types.MAP, schema=swc_io.INPUT_SCHEMA)),
    "outputs": Property(Types.LIST, "Schema representing the outputs that this software "
                        "config will produce.",
                        schema=Property(Types.MAP, schema=swc_io.OUTPUT_SCHEMA)),
}


def config_id_for(create_key, suffix=""):
    """The id of the config an action with ``create_key`` stores."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"nestedflow-software-config:{create_key}"
                                              f"{suffix}"))


class SoftwareConfig(base.Resource):
    """Heat's stored software config: ``config`` (a script or manifest),
    ``group`` (the tool), ``inputs``/``outputs`` schemas and ``options``
    kept in the software-config store under Heat's ``<stack>-<resource>-<id>``
    name; the physical id is the config's id. Nothing updates in place."""

    properties_schema = CONFIG_SCHEMA
    attributes_schema = {"config": Attribute("The config value of the software config.",
                                             Types.STRING)}
    update_resumable = True

    def config_fields(self):
        """(group, config, inputs, outputs, options) stored by the create
        (Heat's rpc client turns absent inputs, outputs, options into [], [], {})."""
        props = self.properties
        return (props.get("group"), props.get("config"), props.get("inputs") or [],
                props.get("outputs") or [], props.get("options") or {})

    def _store(self):
        return self.context.software_configs

    def create(self):
        group, config, inputs, outputs, options = self.config_fields()
        self.context.still_owner()
        row = self._store().create_config(
            self.context.physical_resource_name(), group,
            swc.config_document(config, inputs, outputs, options), self.context.project_id,
            config_id=config_id_for(self.context.create_key))
        return row.id

    def update(self, new_properties, old_properties):
        # Heat: no property allows an update -- a config never changes.
        raise exceptions.UpdateReplace(self.name)

    def delete(self):
        config_id = self.physical_id or config_id_for(self.context.create_key)
        try:
            self._store().delete_config(config_id)
        except exceptions.SoftwareConfigNotFound:
            pass  # Heat ignores NotFound

    def check(self):
        self._stored()

    def suspend(self):
        pass

    def resume(self):
        pass

    def _stored(self):
        if not self.physical_id:
            raise exceptions.PhysicalObjectMissing(self.name, self.physical_id)
        try:
            return self._store().get_config(self.physical_id)
        except exceptions.SoftwareConfigNotFound:
            raise exceptions.PhysicalObjectMissing(self.name, self.physical_id) from None

    def _stored_field(self, key):
        """A field of the stored config's document; None when there is none
        (Heat: NotFound ignored)."""
        if not self.physical_id or self._store() is None:
            return None
        try:
            row = self._store().get_config(self.physical_id)
        except exceptions.SoftwareConfigNotFound:
            return None
        return (row.config or {}).get(key)

    def get_attribute(self, name):
        if name == "config":
            return self._stored_field("config")
        return None


class StructuredConfig(SoftwareConfig):
    """``OS::Heat::StructuredConfig``: ``config`` is a map, stored as it is."""

    properties_schema = {
        **CONFIG_SCHEMA,
        "config": Property(Types.MAP, "Map representing the configuration data structure "
                           "which will be serialized to JSON format."),
    }


class CloudConfig(SoftwareConfig):
    """``OS::Heat::CloudConfig``: cloud-init's cloud-config, stored as
    ``#cloud-config`` and the map's YAML (Heat's test_cloud_config.py)."""

    properties_schema = {
        "cloud_config": Property(Types.MAP, "Map representing the cloud-config data "
                                 "structure which will be formatted as YAML."),
    }

    def config_fields(self):
        document = yaml.safe_dump(self.properties.get("cloud_config"))
        return "Heat::Ungrouped", f"#cloud-config\n{document}", [], [], {}


class MultipartMime(SoftwareConfig):
    """``OS::Heat::MultipartMime``: the parts as one multipart MIME message.

    A part whose ``config`` is a config's id takes that config's text; a
    ``multipart`` part's own parts are appended one by one (Heat's
    ``get_message``).
    """

    properties_schema = {
        "group": Property(Types.STRING, "Namespace to group this multi-part configs by when "
                          "delivered to a server.", default="Heat::Ungrouped"),
        "parts": Property(Types.LIST, "Parts belonging to this message.", default=[],
                          schema=Property(Types.MAP, schema={
                              "config": Property(Types.STRING, "Content of part to attach, "
                                                 "inline or a software config's id.",
                                                 required=True),
                              "filename": Property(Types.STRING, "Optional filename to "
                                                   "associate with part."),
                              "type": Property(Types.STRING, "Whether the part content is "
                                               "text or multipart.", default="text",
                                               constraints=[constraints.AllowedValues(
                                                   ["text", "multipart"])]),
                              "subtype": Property(Types.STRING, "Optional subtype to specify "
                                                  "with the type."),
                          })),
    }

    def config_fields(self):
        return self.properties.get("group"), self.message(), [], [], {}

    def _part_text(self, config):
        if _is_uuid(config) and self._store() is not None:
            try:
                return (self._store().get_config(config).config or {}).get("config") or ""
            except exceptions.SoftwareConfigNotFound:
                pass
        return config

    def message(self):
        subparts = []
        for item in self.properties.get("parts") or []:
            part = self._part_text(item["config"])
            if item.get("type") == "multipart":
                parsed = email.message_from_string(part)
                if parsed and parsed.is_multipart():
                    for inner in parsed.get_payload():
                        _append_part(subparts, inner.get_payload(),
                                     inner.get_content_subtype(), inner.get_filename())
            else:
                _append_part(subparts, part, item.get("subtype") or "",
                             item.get("filename") or "")
        return multipart.MIMEMultipart(_subparts=subparts).as_string()


def _is_uuid(value):
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _append_part(subparts, part, subtype, filename):
    """Heat's ``MultipartMime._append_part``/``_create_message``."""
    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]
    try:
        part.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    message = (text.MIMEText(part, _subtype=subtype, _charset=charset) if subtype
               else text.MIMEText(part, _charset=charset))
    if filename:
        message.add_header("Content-Disposition", "attachment", filename=filename)
    subparts.append(message)


class SoftwareComponent(SoftwareConfig):
    """``OS::Heat::SoftwareComponent``: one config per lifecycle action,
    stored as ``{"configs": [...]}`` in group ``component``."""

    properties_schema = {
        "configs": Property(
            Types.LIST, "The list of configurations for the different lifecycle actions "
            "of the represented software component.", required=True,
            constraints=[constraints.Length(min=1)],
            schema=Property(Types.MAP, schema={
                "actions": Property(Types.LIST, "Lifecycle actions to which the "
                                    "configuration applies.", default=["CREATE", "UPDATE"],
                                    schema=Property(Types.STRING),
                                    constraints=[constraints.Length(min=1)]),
                "config": CONFIG_SCHEMA["config"],
                "tool": Property(Types.STRING, "The configuration tool used to actually "
                                 "apply the configuration on a server.", required=True),
            })),
        "inputs": CONFIG_SCHEMA["inputs"],
        "outputs": CONFIG_SCHEMA["outputs"],
        "options": CONFIG_SCHEMA["options"],
    }
    attributes_schema = {"configs": Attribute(
        "The list of configurations for the different lifecycle actions of the "
        "represented software component.", Types.LIST)}

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """Heat's ``SoftwareComponent.validate``: one config per action."""
        seen = set()
        for config in properties.get("configs") or []:
            actions = config.get("actions") if isinstance(config, dict) else None
            if not isinstance(actions, list):
                continue
            if any(action in seen for action in actions):
                raise exceptions.StackValidationFailed(
                    "Defining more than one configuration for the same action in "
                    "SoftwareComponent is not allowed.", path=f"{path}.configs")
            seen.update(actions)

    def config_fields(self):
        props = self.properties
        return ("component", {"configs": props.get("configs")}, props.get("inputs") or [],
                props.get("outputs") or [], props.get("options") or {})

    def get_attribute(self, name):
        if name == "configs":
            return (self._stored_field("config") or {}).get("configs")
        return None
