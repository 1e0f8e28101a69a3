"""The host's resource plugin, written as a Heat plugin: only its imports
differ from Heat's (``heat.engine`` -> ``nestedflow.resources.heat_compat``)."""

import itertools
import threading
import time

from nestedflow.resources.heat_compat import attributes, properties, resource

#: Seconds a fake server takes to boot.
BOOT_SECONDS = 1.0


class FakeNova:
    """What the host's compute client would be: servers that take a while."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.servers = {}

    def boot(self, name, flavor):
        with self._lock:
            server_id = f"server-{next(self._ids)}"
            self.servers[server_id] = {"name": name, "flavor": flavor,
                                       "active_at": time.monotonic() + BOOT_SECONDS}
            return server_id

    def status(self, server_id):
        server = self.servers.get(server_id)
        if server is None:
            return "DELETED"
        return "ACTIVE" if time.monotonic() >= server["active_at"] else "BUILD"

    def delete(self, server_id):
        self.servers.pop(server_id, None)


class FakeServer(resource.Resource):
    PROPERTIES = (FLAVOR,) = ("flavor",)
    properties_schema = {
        FLAVOR: properties.Schema(properties.Schema.STRING, "Flavor.", default="m1.small",
                                  update_allowed=True),
    }
    attributes_schema = {
        "status": attributes.Schema("Server status.", type=attributes.Schema.STRING),
    }

    def handle_create(self):
        server_id = self.client("nova").boot(self.physical_resource_name(),
                                             self.properties[self.FLAVOR])
        self.resource_id_set(server_id)
        return server_id

    def check_create_complete(self, server_id):
        return self.client("nova").status(server_id) == "ACTIVE"

    def handle_delete(self):
        if self.resource_id is not None:
            self.client("nova").delete(self.resource_id)

    def _resolve_attribute(self, name):
        if name == "status" and self.resource_id:
            return self.client("nova").status(self.resource_id)
        return None


NOVA = FakeNova()
TYPE_NAME = "Host::FakeServer"


def registry():
    """nestedflow's resource types plus the host's."""
    from nestedflow.resources.heat_compat import clients
    from nestedflow.resources.registry import ResourceRegistry

    clients.register_client("nova", lambda request_context: NOVA)
    registry = ResourceRegistry()
    types = {name: registry.get(name) for name in registry.names()}
    return ResourceRegistry.for_testing({**types, TYPE_NAME: FakeServer})
