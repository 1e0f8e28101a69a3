"""``OS::Heat::DeployedServer``: a server that already exists, for deployments.

As heat/engine/resources/openstack/heat/deployed_server.py: nothing is
created; the physical id is a new id (Heat's resource uuid) a deployment's
``server`` can name. Every property updates in place. Attribute ``name``
is the ``name`` property or Heat's ``<stack>-<resource>-<short id>``;
``os_collect_config`` is the agent configuration Heat keeps in the
server's metadata -- empty here, as nestedflow makes no polling
credentials (no keystone user, signed URL or queue).
"""


from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base

TRANSPORTS = ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")


class DeployedServer(base.DatabaseOnlyResource):
    """A server that exists already: nothing is created, its physical id is
    a new id deployments can name. Attribute ``name`` is the ``name``
    property or Heat's ``<stack>-<resource>-<id>``; ``os_collect_config`` is
    empty (nestedflow makes no polling credentials)."""

    properties_schema = {
        "name": Property(Types.STRING, "Server name.", update_allowed=True),
        "metadata": Property(Types.MAP, "Arbitrary key/value metadata to store for this "
                             "server (deprecated by Heat: ignored).", update_allowed=True),
        "software_config_transport": Property(
            Types.STRING, "How the server should receive the metadata required for "
            "software configuration.", default="POLL_SERVER_CFN", update_allowed=True,
            constraints=[constraints.AllowedValues(list(TRANSPORTS))]),
        "deployment_swift_data": Property(
            Types.MAP, "Swift container and object to use for storing deployment data "
            "for the server resource.", default={}, update_allowed=True,
            schema={"container": Property(Types.STRING,
                                          constraints=[constraints.Length(min=1)]),
                    "object": Property(Types.STRING,
                                       constraints=[constraints.Length(min=1)])}),
    }
    attributes_schema = {
        "name": Attribute("Name of the server.", Types.STRING),
        "os_collect_config": Attribute(
            "The os-collect-config configuration for the server's local agent to be "
            "configured to connect to Heat to retrieve deployment data.", Types.MAP),
    }
    id_prefix = "nestedflow-server:"

    def get_attribute(self, name):
        if self.physical_id is None:
            return None  # Heat's BaseServer._resolve_attribute
        if name == "name":
            return self.properties.get("name") or self.context.physical_resource_name()
        if name == "os_collect_config":
            return {}
        return None
