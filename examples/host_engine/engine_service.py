"""A remote nestedflow engine service with the host's plugin registered
(what ``nestedflow-engine`` runs, plus ``server.registry()``)."""

import argparse
import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import server  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--db-url", default="sqlite:////tmp/host-engine.sqlite")
    parser.add_argument("--transport-url", default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--topic", default="nestedflow-engine")
    args = parser.parse_args()

    import nestedflow
    from nestedflow.conf import CONF
    from nestedflow.rpc.service import EngineService

    engine = nestedflow.Engine(db_url=args.db_url, registry=server.registry(), conf=CONF)
    service = EngineService(engine, CONF, transport_url=args.transport_url, topic=args.topic,
                            host=f"engine-{os.getpid()}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    service.start()
    print("engine service ready", flush=True)
    stop.wait()
    service.stop()
    service.wait()
    engine.close()


if __name__ == "__main__":
    main()
