"""``nestedflow-engine``: the Engine API served over oslo.messaging RPC.

::

    nestedflow-engine [--config-file FILE ...] [--db-url URL]
                      [--jobboard-url zookeeper://HOST:PORT/ROOT]
                      [--transport-url rabbit://USER:PASS@HOST:5672/]
                      [--topic TOPIC] [--host NAME] [--workers N]
                      [--socket PATH] [--no-socket]
                      [--log-file FILE] [--debug]

Clients: :class:`nestedflow.rpc.EngineClient`; with ``[heat_engine] enabled``
also heat-api (Heat's engine RPC API, :mod:`nestedflow.heat_rpc`). Flags override the
configuration file (``[DEFAULT] transport_url``, ``[rpc] topic``/``host``,
``[database] connection``, ``[engine] jobboard_url``/``max_workers``).
Without a jobboard each service runs the traversals it starts in-process.

It is also the command line's resident engine: it listens on the local
socket ``[cli] engine_socket`` (:mod:`nestedflow.rpc.resident_client`),
where ``nestedflow`` commands find it instead of building an engine of
their own. With no transport it serves that socket alone (a resident
engine for one host's command line needs no broker).
SIGTERM or SIGINT: stop taking requests, let those in progress and the
in-process traversals finish, exit 0.
"""

import argparse
import logging as std_logging
import os
import signal
import sys
import threading

from nestedflow.cmd import conductor as daemon

LOG = std_logging.getLogger("nestedflow.engine")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nestedflow-engine",
        description="Serve the nestedflow Engine API over oslo.messaging RPC.")
    parser.add_argument("--config-file", metavar="FILE", action="append",
                        dest="config_files",
                        help=f"oslo.config file, may be repeated (default: "
                        f"{daemon.DEFAULT_CONFIG_FILE} if it exists)")
    parser.add_argument("--db-url", metavar="URL", help="state database")
    parser.add_argument("--jobboard-url", metavar="URL",
                        help="zookeeper://HOST:PORT/ROOT to post traversals for conductors")
    parser.add_argument("--transport-url", metavar="URL",
                        help="oslo.messaging transport ([DEFAULT] transport_url)")
    parser.add_argument("--topic", help="RPC topic ([rpc] topic)")
    parser.add_argument("--host", help="this service's server name ([rpc] host)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="resource actions of one traversal at once "
                        "([engine] max_workers)")
    parser.add_argument("--socket", metavar="PATH",
                        help="local socket the nestedflow command line reaches this "
                        "engine by ([cli] engine_socket)")
    parser.add_argument("--no-socket", action="store_true",
                        help="do not listen on the local socket ([cli] serve_socket)")
    parser.add_argument("--log-file", metavar="FILE", help="log here instead of stderr")
    parser.add_argument("--debug", action="store_true", help="log at DEBUG level")
    return parser


def register_messaging_opts(conf):
    """oslo.messaging's [DEFAULT] options (transport_url...), so they can be
    read and overridden before a transport exists."""
    from oslo_messaging import opts

    for group, group_opts in opts.list_opts():
        if group is None:
            conf.register_opts(group_opts)


def apply_arguments(conf, args):
    env = os.environ.get
    overrides = {
        ("database", "connection"): args.db_url or env("NESTEDFLOW_DB_URL"),
        ("engine", "jobboard_url"): args.jobboard_url or env("NESTEDFLOW_JOBBOARD_URL"),
        (None, "transport_url"): args.transport_url or env("NESTEDFLOW_TRANSPORT_URL"),
        ("engine", "max_workers"): args.workers,
        ("rpc", "topic"): args.topic,
        ("rpc", "host"): args.host,
        ("cli", "engine_socket"): args.socket or env("NESTEDFLOW_ENGINE_SOCKET"),
        ("cli", "serve_socket"): False if args.no_socket else None,
        (None, "log_file"): args.log_file,
        (None, "debug"): True if args.debug else None,
    }
    for (group, name), value in overrides.items():
        if value not in (None, ""):
            conf.set_override(name, value, group=group)


def serve(conf):
    from nestedflow.engine.service import Engine
    from nestedflow.messaging import transport
    from nestedflow.rpc.service import EngineService

    # Only a transport someone configured: oslo.messaging's own default
    # (rabbit:// on localhost) is not a choice to serve RPC on.
    rpc_url = None if transport.url(conf) == transport.IN_PROCESS else transport.url(conf)
    if rpc_url is None and (not conf.cli.serve_socket or conf.heat_engine.enabled):
        raise daemon.UsageError("no transport: pass --transport-url "
                                "rabbit://USER:PASS@HOST:5672/ or set [DEFAULT] transport_url")
    engine = Engine(db_url=conf.database.connection, jobboard_url=conf.engine.jobboard_url,
                    transport_url=rpc_url,
                    engine_id=f"engine-{conf.rpc.host}-{os.getpid()}")
    # Built now, not at the first call: it beats from the start, so
    # service lists show it (as heat-engine registers its service when it
    # starts), and it resumes what dead engines left at once.
    engine.runtime  # noqa: B018 -- building is the point
    services = []
    if rpc_url is not None:
        services.append(EngineService(engine, conf, transport_url=rpc_url))
    if conf.cli.serve_socket:
        from nestedflow.rpc.resident_client import default_socket_path
        from nestedflow.rpc.resident_service import ResidentService

        services.append(ResidentService(engine, conf.cli.engine_socket
                                        or default_socket_path()))
    if conf.heat_engine.enabled:
        # heat-api's calls, on their own exchange and topic, over the same Engine.
        from nestedflow.heat_rpc.service import HeatEngineService

        services.append(HeatEngineService(engine, conf, transport_url=rpc_url))
    stopped = threading.Event()

    def on_signal(signum, frame):
        LOG.info("%s: stopping", signal.Signals(signum).name)
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started = [service.start() is not False for service in services]
    if not any(started):
        # Socket-only, and the socket is another engine's or unusable.
        engine.close()
        LOG.error("nothing to serve: the local socket is not ours and no transport is set")
        return 1
    while not stopped.wait(1.0):
        pass
    for service in services:
        service.stop()
    for service in services:
        service.wait()
    engine.close()
    LOG.info("engine service %s stopped", conf.rpc.host)
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        conf = daemon.load_conf(args.config_files, prog="nestedflow-engine")
        register_messaging_opts(conf)
        apply_arguments(conf, args)
        daemon.setup_logging(conf)
        return serve(conf)
    except daemon.UsageError as error:
        sys.stderr.write(f"nestedflow-engine: error: {error}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
