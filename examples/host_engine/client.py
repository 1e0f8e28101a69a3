"""Calls the host's RPC API: deploy a stack of fake servers, show it."""

import argparse
import json

import oslo_messaging as messaging
from oslo_config import cfg


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("servers", type=int)
    parser.add_argument("--transport-url", default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="host-engine")
    args = parser.parse_args()
    transport = messaging.get_rpc_transport(cfg.CONF, url=args.transport_url)
    client = messaging.get_rpc_client(transport, messaging.Target(topic=args.topic),
                                      timeout=90)
    stack_id = client.call({}, "deploy", name=args.name, servers=args.servers)
    print(json.dumps(client.call({}, "show", stack_id=stack_id, wait=True)))
    transport.cleanup()


if __name__ == "__main__":
    main()
