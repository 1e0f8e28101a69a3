"""The ``nestedflow`` command line: a cliff application.

::

    nestedflow [--db-url URL] [--jobboard-url URL] [--transport-url URL]
               [--engine auto|embedded|remote]
               [--config-file FILE ...] [--debug] [-v|-q] [--log-file FILE]
               COMMAND [ARGS]

Every command is an entry point in the ``nestedflow.cli`` group (cliff turns
``stack_create`` into ``stack create``); names and options follow
``openstack stack ...`` (python-heatclient's OSC plugin) wherever the
function is the same -- see doc/source/cli.rst for the mapping.

Start-up is kept short: this module and the command modules import only
cliff and the standard library; the engine, TaskFlow, oslo.messaging and
the database drivers are imported when a command first touches
``app.engine``. ``stack list`` reads through ``app.reader``, which on a
current SQLite database is SQLAlchemy Core alone -- no ORM, oslo.db or
oslo.config (with the URL given by --db-url or $NESTEDFLOW_DB_URL).

When a ``nestedflow-engine`` listens on the local socket (``[cli]
engine_socket``) and serves the same database, ``app.engine`` is a
:class:`nestedflow.rpc.resident_client.ResidentClient` instead: no engine
is built here and neither SQLAlchemy nor TaskFlow is imported (``--engine``
/ ``$NESTEDFLOW_ENGINE`` / ``[cli] engine`` choose; ``auto`` falls back to
the embedded engine when none answers).
"""

import logging
import os
import sys

from cliff import app as cliff_app
from cliff import commandmanager

from nestedflow.cmd import logs
from nestedflow.cmd.errors import CommandError  # noqa: F401 (re-exported)

LOG = logging.getLogger(__name__)

DEFAULT_CONFIG_FILE = "/etc/nestedflow/nestedflow.conf"
NAMESPACE = "nestedflow.cli"

#: Global options that take a value, so ``-f json stack show x`` can be told
#: apart from a command name.
_VALUE_OPTIONS = frozenset({"--db-url", "--jobboard-url", "--transport-url", "--config-file",
                            "--log-file", "--log-config-append", "--log-dir", "--engine"})
_FORMAT_OPTIONS = ("-f", "--format")


def make_engine(db_url=None, jobboard_url=None, transport_url=None):
    """Build the engine; tests replace this function to inject a fake."""
    from nestedflow.engine.service import Engine

    return Engine(db_url=db_url, jobboard_url=jobboard_url, transport_url=transport_url)


def make_resident(socket_path, db_url):
    """A client of the resident engine at ``socket_path`` serving ``db_url``;
    raises ResidentEngineUnavailable when there is none to use."""
    from nestedflow.rpc.resident_client import ResidentClient

    return ResidentClient.connect(socket_path, db_url)


def make_reader(db_url):
    """What ``stack list`` reads through while no Engine is built: a
    :class:`nestedflow.engine.listing.StackReader` on a current SQLite
    database, else None (the Engine then reads, migrating the schema if
    it is behind). Tests that replace make_engine replace this too."""
    from nestedflow.db.core_reads import CoreReader
    from nestedflow.engine.listing import StackReader

    db = CoreReader.open(db_url)
    return None if db is None else StackReader(db)


def _version():
    try:
        from importlib.metadata import version

        return version("nestedflow")
    except Exception:  # not installed: running from a source tree
        return "unknown"


def _first(*values):
    for value in values:
        if value:
            return value
    return None


def _display_url(engine):
    from nestedflow.cmd.commands.database import display_url

    db = getattr(engine, "db", None)
    return display_url(getattr(db, "url", None))


def move_global_format(argv):
    """``-f json stack list`` -> ``stack list -f json``.

    The argparse command line accepted ``-f`` before the command; in cliff
    it belongs to each listing/showing command, so a leading one is moved
    behind the command's own arguments (scripts written for the old
    command line keep working).
    """
    argv = list(argv)
    moved = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            break  # the command name: everything after is the command's
        if arg in _FORMAT_OPTIONS and i + 1 < len(argv):
            moved += argv[i:i + 2]
            del argv[i:i + 2]
            continue
        if arg.startswith("--format="):
            moved.append(arg)
            del argv[i]
            continue
        i += 2 if arg in _VALUE_OPTIONS else 1
    return argv + moved


def _command_start(argv):
    """Index of the command's first word in ``argv`` (after the global options)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _VALUE_OPTIONS or argv[i] in _FORMAT_OPTIONS else 1
    return i


def _commands_own_config_file(parse_known_args):
    """cliff parses global options anywhere on the line; ``--config-file``
    after the command's name is the command's own (heatclient's ``software
    config create --config-file SCRIPT``), not the oslo.config file."""

    def parse(args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        start = _command_start(args)
        rest, own = [], []
        i = start
        while i < len(args):
            if args[i] == "--config-file" and i + 1 < len(args):
                own += args[i:i + 2]
                i += 2
                continue
            (own if args[i].startswith("--config-file=") else rest).append(args[i])
            i += 1
        options, remainder = parse_known_args(args[:start] + rest, namespace)
        return options, remainder + own

    return parse


class NestedflowApp(cliff_app.App):
    """Global options, configuration and a lazily built engine."""

    NAME = "nestedflow"
    LOG = logging.getLogger("nestedflow.cli")
    # Quiet by default: a command's answer is its output; -v shows INFO.
    DEFAULT_VERBOSE_LEVEL = 0

    def __init__(self, stdout=None, stderr=None):
        super().__init__(
            description="Heat-style stack orchestration on OpenStack TaskFlow.",
            version=_version(),
            command_manager=commandmanager.CommandManager(NAMESPACE),
            stdout=stdout,
            stderr=stderr,
            deferred_help=True,
        )
        self._engine = None
        self._conf = None
        #: make_reader's answer once asked (False: not yet).
        self._reader = False
        #: The stack a command is waiting on or following (named on Ctrl-C).
        self.followed_stack = None
        #: The command needs an Engine in this process (Command.embedded_only).
        self._embedded_only = False
        #: Whether the resident engine was looked for already, and its client.
        self._resident_tried = False
        self._resident_client = None

    def build_option_parser(self, description, version, argparse_kwargs=None):
        # No abbreviations: heatclient's ``software deployment create
        # --config ID`` must not be taken for the global --config-file.
        argparse_kwargs = {**(argparse_kwargs or {}), "allow_abbrev": False}
        parser = super().build_option_parser(description, version, argparse_kwargs)
        parser.prog = "nestedflow"
        parser.parse_known_args = _commands_own_config_file(parser.parse_known_args)
        parser.add_argument(
            "--db-url", metavar="URL",
            help="SQLAlchemy URL of the state database (default: $NESTEDFLOW_DB_URL, "
            "else [database] connection, else an SQLite file in the user's data dir)")
        parser.add_argument(
            "--jobboard-url", metavar="URL",
            help="zookeeper://HOST:PORT/ROOT to hand traversals to conductors "
            "(default: $NESTEDFLOW_JOBBOARD_URL, else [engine] jobboard_url, "
            "else in-process)")
        parser.add_argument(
            "--transport-url", metavar="URL",
            help="oslo.messaging transport (default: $NESTEDFLOW_TRANSPORT_URL, "
            "else [DEFAULT] transport_url)")
        parser.add_argument(
            "--engine", choices=("auto", "embedded", "remote"),
            help="auto: the resident engine (nestedflow-engine) when one answers on "
            "its local socket and serves the same database, else one in this "
            "process; embedded: always in this process; remote: always the "
            "resident one (default: $NESTEDFLOW_ENGINE, else [cli] engine, else auto)")
        parser.add_argument(
            "--config-file", metavar="FILE", action="append", dest="config_files",
            help=f"oslo.config file, may be repeated (default: {DEFAULT_CONFIG_FILE} "
            "if it exists)")
        logs.add_arguments(parser)
        return parser

    def configure_logging(self):
        logs.configure(self.options, self.stderr, self.LOG)

    def run_subcommand(self, argv):
        try:
            self.command_manager.find_command(argv)
        except ValueError:
            return self._unknown_command(argv)
        return super().run_subcommand(argv)

    def _unknown_command(self, argv):
        # cliff writes its "did you mean" list to stdout, where a script
        # reading a command's answer would take it for one, and lists
        # every command sharing a prefix; an operator wants the few close
        # ones of the group they typed into, on stderr.
        import difflib

        typed = []
        for arg in argv:
            if arg.startswith("-"):
                break
            typed.append(arg)
        typed_name = " ".join(typed)
        names = sorted({name for name, _ in self.command_manager})
        group = []
        for depth in range(len(typed) - 1, 0, -1):
            prefix = " ".join(typed[:depth]) + " "
            group = [name for name in names if name.startswith(prefix)]
            if group:
                break
        close = difflib.get_close_matches(typed_name, group or names, n=4, cutoff=0.6)
        self.stderr.write(f"{self.NAME}: '{typed_name}' is not a {self.NAME} command. "
                          f"See '{self.NAME} --help'.\n")
        if close:
            self.stderr.write("Did you mean one of these?\n")
            for name in close:
                self.stderr.write(f"  {name}\n")
        return 2

    def prepare_to_run_command(self, cmd):
        self._embedded_only = getattr(cmd, "embedded_only", False)

    def initialize_app(self, argv):
        if not argv and not self.options.deferred_help:
            # No command: cliff would start its interactive shell, which an
            # operator typing ``nestedflow`` alone does not expect.
            self.parser.print_usage(self.stderr)
            self.stderr.write("nestedflow: error: a command is required "
                              "(nestedflow --help lists them)\n")
            raise SystemExit(2)

    # -- what the commands use ---------------------------------------------

    @property
    def conf(self):
        """oslo.config's CONF loaded from --config-file (first use only)."""
        if self._conf is None:
            from nestedflow import conf

            self._conf = conf.load(self.options.config_files)
        return self._conf

    def _has_config_file(self):
        return bool(self.options.config_files or os.path.isfile(DEFAULT_CONFIG_FILE))

    @property
    def db_url(self):
        given = self.options.db_url or os.environ.get("NESTEDFLOW_DB_URL")
        if given and not self._has_config_file():
            # Nothing to read and the URL given: loading the configuration
            # would change nothing here but import oslo.config (0.03 s of
            # ``stack list``'s CPU). A file named or present is read, so its
            # mistakes are still reported; the Engine loads it regardless.
            return given
        connection = self.conf.database.connection
        return given or connection

    @property
    def jobboard_url(self):
        return _first(self.options.jobboard_url, os.environ.get("NESTEDFLOW_JOBBOARD_URL"),
                      self.conf.engine.jobboard_url)

    @property
    def transport_url(self):
        # None: the engine reads oslo.messaging's [DEFAULT] transport_url itself.
        return _first(self.options.transport_url, os.environ.get("NESTEDFLOW_TRANSPORT_URL"))

    def _cli_option(self, name, environ):
        """``[cli] name`` as $environ or the configuration file set it; None
        when neither does -- without importing oslo.config when there is no
        file to read (the resident path's point is a short start)."""
        value = os.environ.get(environ)
        if value or not self._has_config_file():
            return value or None
        return getattr(self.conf.cli, name)

    def _resident(self):
        """The resident engine's client, or None to build an embedded one."""
        if self._resident_tried or self._embedded_only:
            return None
        self._resident_tried = True
        mode = self.options.engine or self._cli_option("engine", "NESTEDFLOW_ENGINE") or "auto"
        if mode == "embedded":
            return None
        from nestedflow import exceptions
        from nestedflow.rpc.resident_client import default_socket_path

        path = (self._cli_option("engine_socket", "NESTEDFLOW_ENGINE_SOCKET")
                or default_socket_path())
        try:
            client = make_resident(path, self.db_url)
        except exceptions.ResidentEngineUnavailable as error:
            if mode == "remote":
                raise
            LOG.info("%s; using an engine in this process", error)
            return None
        LOG.info("resident engine at %s (pid %s)", path, client.served.get("pid"))
        self._resident_client = client
        return client

    @property
    def engine(self):
        """The resident engine's client when one serves (see _resident),
        else the Engine, built (and the database opened) on first use."""
        if self._engine is None:
            self._engine = self._resident()
        if self._engine is None:
            self.conf  # noqa: B018 -- the Engine reads its other options from CONF
            self._engine = make_engine(db_url=self.db_url, jobboard_url=self.jobboard_url,
                                       transport_url=self.transport_url)
            LOG.info("engine on %s, %s", _display_url(self._engine),
                     "jobboard " + self.jobboard_url if self.jobboard_url else "in-process")
        return self._engine

    @property
    def reader(self):
        """What a command that only lists stacks uses: the Engine if one is
        built, else make_reader's reader, else the Engine. Listing without
        the Engine skips importing the ORM, oslo.db and their setup: about
        0.15 s of the 0.48 s of CPU ``stack list`` took (doc/source/performance.rst)."""
        if self._engine is None and self._reader is False:
            self._engine = self._resident()
        if self._engine is not None:
            return self._engine
        if self._reader is False:
            self._reader = make_reader(self.db_url)
            if self._reader is not None:
                LOG.info("reading stacks from %s", _display_url(self._reader))
                if self.options.config_files or os.path.isfile(DEFAULT_CONFIG_FILE):
                    # Read anyway when a file is there (db_url): its hidden tags count.
                    self._reader.hidden_tags = tuple(self.conf.engine.hidden_stack_tags)
        return self.engine if self._reader is None else self._reader

    def find_stack(self, name_or_id):
        """The Stack view named or identified by ``name_or_id``."""
        return self.engine.get_stack(name_or_id)

    def close(self):
        if self._reader not in (None, False):
            reader, self._reader = self._reader, None
            reader.close()
        if self._engine is not None:
            engine, self._engine = self._engine, None
            engine.close()

    def clean_up(self, cmd, result, err):
        elsewhere = self._engine is not None and self._engine is self._resident_client
        self.close()
        if isinstance(err, KeyboardInterrupt):
            name = self.followed_stack
            if name is None:
                self.stderr.write("Interrupted; the stack may still be IN_PROGRESS.\n")
            elif elsewhere or self.jobboard_url:
                # A conductor or the resident engine runs the action: only
                # the watching stopped.
                self.stderr.write(f"Interrupted; stack {name} carries on. Follow it again "
                                  f"with: nestedflow stack event list {name} --follow\n")
            else:
                self.stderr.write(f"Interrupted; stack {name} may still be IN_PROGRESS "
                                  f"(see: nestedflow stack show {name})\n")


def main(argv=None, stdout=None, stderr=None):
    """Run one command; returns the exit code."""
    if argv is None:
        argv = sys.argv[1:]
    app = NestedflowApp(stdout=stdout, stderr=stderr)
    try:
        return app.run(move_global_format(argv))
    except SystemExit as exc:  # usage error (2) or --help / --version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        app.close()


if __name__ == "__main__":
    sys.exit(main())
