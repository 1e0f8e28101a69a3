"""A Heat-style host engine with its own RPC API, over nestedflow.

``--in-process`` embeds a nestedflow Engine; otherwise it drives a remote
engine service through EngineClient. Either way the host's API is the same.
"""

import argparse
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import oslo_messaging as messaging  # noqa: E402
import server  # noqa: E402
from oslo_config import cfg  # noqa: E402


class HostAPI:
    """The host's RPC API (its own topic and version)."""

    target = messaging.Target(version="1.0")

    def __init__(self, engine):
        self.engine = engine

    def deploy(self, ctxt, name, servers):
        """Create a stack of ``servers`` fake servers; returns its id at once."""
        template = {"heat_template_version": "2018-08-31",
                    "resources": {f"server{i}": {"type": server.TYPE_NAME}
                                  for i in range(servers)},
                    "outputs": {"status": {"value": {"get_attr": ["server0", "status"]}}}}
        return self.engine.create_stack(name, template).id

    def show(self, ctxt, stack_id, wait=False):
        stack = self.engine.wait(stack_id, timeout=60) if wait else \
            self.engine.get_stack(stack_id)
        resources = self.engine.list_resources(stack_id)
        return {"status": stack.stack_status, "outputs": stack.outputs,
                "servers": sorted(r.physical_id or "" for r in resources)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--db-url", default="sqlite:////tmp/host-engine.sqlite")
    parser.add_argument("--transport-url", default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="host-engine")
    parser.add_argument("--engine-topic", default="nestedflow-engine")
    args = parser.parse_args()

    import nestedflow
    from nestedflow.rpc import EngineClient

    conf = cfg.CONF
    if args.in_process:
        engine = nestedflow.Engine(db_url=args.db_url, registry=server.registry(), conf=conf)
    else:
        engine = EngineClient(transport_url=args.transport_url, conf=conf,
                              topic=args.engine_topic)
    transport = messaging.get_rpc_transport(conf, url=args.transport_url)
    rpc = messaging.get_rpc_server(
        transport, messaging.Target(topic=args.topic, server=f"host-{os.getpid()}"),
        [HostAPI(engine)], executor="threading")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    rpc.start()
    print("host ready", "in-process" if args.in_process else "remote", flush=True)
    stop.wait()
    rpc.stop()
    rpc.wait()
    engine.close()
    transport.cleanup()


if __name__ == "__main__":
    main()
