"""Heat's engine RPC API served over an Engine, beside nestedflow's own API.

heat-api (heat/rpc/client.py ``EngineClient``) calls ``Target(topic='engine',
version='1.x')`` on its control exchange; this server declares 1.36, the
version heat-engine serves (heat/engine/service.py ``RPC_API_VERSION``).
"""

import logging

import oslo_messaging as messaging

from nestedflow.heat_rpc import catalog, resources, software, stacks
from nestedflow.messaging.serializer import ContextSerializer

LOG = logging.getLogger(__name__)

#: The Heat engine RPC API version served.
VERSION = "1.36"


class HeatEngineEndpoint(stacks.StackCalls, resources.ResourceCalls, catalog.CatalogCalls,
                         software.SoftwareCalls):
    """Every method heat-api v1 calls, on ``engine`` (a :class:`nestedflow.Engine`).

    Results are Heat's plain dicts; the context is heat-api's
    ``RequestContext.to_dict()`` as an oslo.context RequestContext.
    """

    target = messaging.Target(version=VERSION)


def methods():
    """Names of the Heat RPC methods served."""
    return sorted(name for name in dir(HeatEngineEndpoint)
                  if getattr(getattr(HeatEngineEndpoint, name), "heat_rpc", False))


class HeatEngineService:
    """An RPC server of Heat's engine API on ``[heat_engine]``'s exchange,
    topic and host; start(), stop(), wait()."""

    def __init__(self, engine, conf, transport_url=None):
        group = conf.heat_engine
        self.exchange = group.exchange
        self.topic = group.topic
        self.host = group.host
        self.endpoint = HeatEngineEndpoint(engine, conf)
        self._transport = messaging.get_rpc_transport(conf, url=transport_url)
        target = messaging.Target(exchange=group.exchange, topic=group.topic,
                                  server=group.host, version=VERSION)
        self._server = messaging.get_rpc_server(
            self._transport, target, [self.endpoint], executor="threading",
            serializer=ContextSerializer())

    def start(self):
        self._server.start()
        LOG.info("Heat engine RPC API %s served as %s on exchange %s, topic %s",
                 VERSION, self.host, self.exchange, self.topic)

    def stop(self):
        self._server.stop()

    def wait(self):
        self._server.wait()
        self._transport.cleanup()
