"""``nestedflow-conductor`` (also ``nestedflow conductor run``) and ``conductor list``.

::

    nestedflow-conductor [--config-file FILE ...] [--db-url URL]
                         [--jobboard-url zookeeper://HOST:PORT/ROOT]
                         [--transport-url URL] [--name NAME] [--job-slots N]
                         [--workers N] [--session-timeout SECONDS]
                         [--max-attempts N] [--log-file FILE] [--debug]

Flags override the configuration file (``[engine] jobboard_url``,
``[database] connection``, oslo.messaging's ``[DEFAULT] transport_url`` and the
``[conductor]`` group); the ``NESTEDFLOW_DB_URL``/``NESTEDFLOW_JOBBOARD_URL``
/``NESTEDFLOW_TRANSPORT_URL`` environment variables sit between the two,
as for the ``nestedflow`` command. Logging is oslo.log's (``[DEFAULT]
log_file``, ``debug``, ``use_journal``...).

SIGTERM or SIGINT: stop claiming, suspend running flows at a safe point
(resource actions in flight finish), release their claims so other
conductors resume them, exit 0. A second signal exits at once; the claims
then lapse with the ZooKeeper session, as after a crash.
"""

import argparse
import logging as std_logging
import os
import signal
import sys

DEFAULT_CONFIG_FILE = "/etc/nestedflow/nestedflow.conf"

LOG = std_logging.getLogger("nestedflow.conductor")

#: Loggers too chatty at INFO for a daemon's log.
QUIET_LOGGERS = ["kazoo=WARN", "taskflow=WARN", "stevedore=WARN", "alembic=WARN"]


def add_run_arguments(parser, with_urls=True):
    """The conductor's flags (``with_urls``: also the URL/config flags the
    ``nestedflow`` command already has globally)."""
    if with_urls:
        parser.add_argument("--config-file", metavar="FILE", action="append",
                            dest="config_files",
                            help=f"oslo.config file, may be repeated (default: "
                            f"{DEFAULT_CONFIG_FILE} if it exists)")
        parser.add_argument("--db-url", metavar="URL",
                            help="state database shared by every conductor and engine")
        parser.add_argument("--jobboard-url", metavar="URL",
                            help="zookeeper://HOST:PORT[,HOST:PORT...]/ROOT")
        parser.add_argument("--transport-url", metavar="URL",
                            help="oslo.messaging transport for stack notifications")
        parser.add_argument("--debug", action="store_true", help="log at DEBUG level")
    parser.add_argument("--name", help="conductor name, unique per jobboard "
                        "(default: [conductor] name, the short hostname)")
    parser.add_argument("--job-slots", type=int, metavar="N",
                        help="jobs run at once ([conductor] job_slots)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="resource actions of one job run at once "
                        "([conductor] resource_action_workers)")
    parser.add_argument("--session-timeout", type=float, metavar="SECONDS",
                        help="ZooKeeper session timeout ([conductor] "
                        "zookeeper_session_timeout)")
    parser.add_argument("--max-attempts", type=int, metavar="N",
                        help="claims of a job before its stack is marked FAILED "
                        "([conductor] max_job_attempts)")
    parser.add_argument("--log-file", metavar="FILE", help="log here instead of stderr")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nestedflow-conductor",
        description="Claim stack traversal jobs from a ZooKeeper jobboard and run them.")
    add_run_arguments(parser)
    return parser


def _register_logging(conf):
    from oslo_config import cfg
    from oslo_log import log

    if "log_file" in conf:
        return
    try:
        log.register_options(conf)
    except cfg.ArgsAlreadyParsedError:
        # The nestedflow command parsed its configuration already; oslo.log's
        # options are command-line options, registrable only before that.
        conf.clear()
        log.register_options(conf)


def load_conf(config_files=None, prog="nestedflow-conductor"):
    """The global CONF with oslo.log's options, loaded from ``config_files``;
    ``prog``: the daemon's name, which its heartbeat reports (service lists)."""
    from nestedflow import conf

    _register_logging(conf.CONF)
    return conf.load(config_files, prog=prog)


def _first(*values):
    for value in values:
        if value not in (None, ""):
            return value
    return None


def apply_arguments(conf, args):
    """Flags (then environment) over the configuration files."""
    from nestedflow.messaging import transport

    transport.register_opts(conf)  # [DEFAULT] transport_url is oslo.messaging's
    overrides = {
        ("conductor", "name"): args.name,
        ("conductor", "job_slots"): args.job_slots,
        ("conductor", "resource_action_workers"): args.workers,
        ("conductor", "zookeeper_session_timeout"): args.session_timeout,
        ("conductor", "max_job_attempts"): args.max_attempts,
        ("engine", "jobboard_url"): _first(getattr(args, "jobboard_url", None),
                                           os.environ.get("NESTEDFLOW_JOBBOARD_URL")),
        (None, "transport_url"): _first(getattr(args, "transport_url", None),
                                        os.environ.get("NESTEDFLOW_TRANSPORT_URL")),
        ("database", "connection"): _first(getattr(args, "db_url", None),
                                           os.environ.get("NESTEDFLOW_DB_URL")),
        (None, "log_file"): args.log_file,
        (None, "debug"): True if getattr(args, "debug", False) else None,
    }
    for (group, name), value in overrides.items():
        if value is not None:
            conf.set_override(name, value, group=group)


def setup_logging(conf):
    from oslo_log import log

    log.set_defaults(default_log_levels=log.get_default_log_levels() + QUIET_LOGGERS)
    log.setup(conf, "nestedflow")


class UsageError(Exception):
    pass


def make_conductor(conf):
    """Build the engine and conductor from the loaded configuration."""
    from nestedflow.conductor.service import Conductor
    from nestedflow.engine.service import Engine
    from nestedflow.messaging import transport

    jobboard_url = conf.engine.jobboard_url
    if not jobboard_url:
        raise UsageError("no jobboard: pass --jobboard-url zookeeper://HOST:PORT/ROOT "
                         "or set [engine] jobboard_url")
    db_url = conf.database.connection
    if not db_url or db_url.startswith("sqlite"):
        LOG.warning("state database is %s: conductors on other hosts cannot share it; "
                    "use PostgreSQL or MariaDB (--db-url)", db_url or "the default SQLite file")
    transport_url = transport.url(conf)
    if transport_url.startswith("fake"):
        LOG.warning("transport_url is %s: this conductor hears of no stack settled "
                    "elsewhere, so a parent waiting for a nested stack run by another "
                    "conductor only notices it at the periodic database check; use "
                    "rabbit://USER:PASS@HOST:5672/ (--transport-url)", transport_url)
    c = conf.conductor
    engine = Engine(db_url=db_url, jobboard_url=jobboard_url, transport_url=transport_url,
                    max_workers=c.resource_action_workers, engine_id=c.name)
    try:
        return Conductor(engine, c.name, job_slots=c.job_slots,
                         session_timeout=c.zookeeper_session_timeout,
                         max_attempts=c.max_job_attempts, poll_interval=c.poll_interval)
    except Exception:
        engine.close()
        raise


def serve(conf):
    """Run a conductor until SIGTERM/SIGINT; returns the exit code."""
    from nestedflow import exceptions
    conductor = make_conductor(conf)
    stopping = []

    def on_signal(signum, frame):
        if stopping:
            LOG.warning("second %s: exiting now; claims lapse with the ZooKeeper session",
                        signal.Signals(signum).name)
            os._exit(1)
        stopping.append(signum)
        LOG.info("%s: no new jobs; handing running ones back at a safe point",
                 signal.Signals(signum).name)
        conductor.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        conductor.connect()
    except exceptions.NestedflowError as error:
        LOG.error("%s", error)
        conductor.close()
        return 1
    LOG.info("conductor %s: %d job slot(s), %d resource-action worker(s), jobboard %s, "
             "session timeout %ss", conductor.name, conf.conductor.job_slots,
             conf.conductor.resource_action_workers, conductor.url,
             conf.conductor.zookeeper_session_timeout)
    try:
        conductor.run()
    except exceptions.NestedflowError as error:
        LOG.error("%s", error)
        conductor.stop()
    clean = conductor.shutdown(conf.conductor.graceful_shutdown_timeout or None)
    conductor.close()
    if not clean:
        # Flows still in flight: leave now; our session is closed, so other
        # conductors resume them at once from the journal.
        LOG.warning("exiting with jobs still running; other conductors resume them")
        std_logging.shutdown()
        os._exit(1)
    LOG.info("conductor %s stopped", conductor.name)
    return 0


def run_from_args(args):
    try:
        conf = load_conf(args.config_files)
        apply_arguments(conf, args)
        setup_logging(conf)
        return serve(conf)
    except UsageError as error:
        sys.stderr.write(f"nestedflow-conductor: error: {error}\n")
        return 2


def main(argv=None):
    args = build_parser().parse_args(argv)
    return run_from_args(args)


if __name__ == "__main__":
    sys.exit(main())
