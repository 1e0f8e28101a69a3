"""The engine service: an :class:`nestedflow.Engine` served over oslo.messaging.

Several services may listen on one topic: a call without a server name
goes to one of them (the broker round-robins the topic's queue), so they
must share one database -- and a jobboard, or each runs the traversals it
dispatched itself (its Engine's in-process execution).
"""

import functools
import logging

import oslo_messaging as messaging

from nestedflow import exceptions
from nestedflow.rpc import api

LOG = logging.getLogger(__name__)


class EngineEndpoint:
    """Dispatches each RPC method of :data:`api.METHODS` to the engine.

    A nestedflow error is re-raised as :class:`exceptions.RemoteFailure`
    (see its docstring); any other error reaches the client as oslo.messaging's
    ``RemoteError`` and is logged here with its traceback.
    """

    target = messaging.Target(version=api.VERSION)

    def __init__(self, engine):
        self._engine = engine

    def __getattr__(self, name):
        # oslo.messaging looks the method up by name on the endpoint.
        if name not in api.METHODS:
            raise AttributeError(name)
        return functools.partial(self._call, getattr(self._engine, name))

    @staticmethod
    def _call(method, ctxt, **kwargs):
        try:
            return method(context=ctxt, **kwargs)
        except exceptions.NestedflowError as error:
            raise exceptions.to_remote(error) from None


class EngineService:
    """An RPC server of ``engine`` on ``conf.rpc.topic``; start(), stop(), wait().

    ``conf`` carries oslo.messaging's options (``[DEFAULT] transport_url``,
    ``executor_thread_pool_size``...); ``transport_url`` overrides its URL.
    """

    def __init__(self, engine, conf, transport_url=None, topic=None, host=None):
        self.engine = engine
        api.register_opts(conf)  # as EngineClient's
        self.topic = topic or conf.rpc.topic
        self.host = host or conf.rpc.host
        self._transport = messaging.get_rpc_transport(conf, url=transport_url)
        target = messaging.Target(topic=self.topic, server=self.host,
                                  version=api.VERSION)
        self._server = messaging.get_rpc_server(
            self._transport, target, [EngineEndpoint(engine)],
            executor="threading", serializer=api.EngineSerializer())

    def start(self):
        self._server.start()
        LOG.info("engine service %s listening on topic %s (RPC API %s)",
                 self.host, self.topic, api.VERSION)

    def stop(self):
        self._server.stop()

    def wait(self):
        """After stop(): let requests in progress finish, then release the transport."""
        self._server.wait()
        self._transport.cleanup()
