"""Logging for the ``nestedflow`` command: errors as one line, the rest by oslo.log.

A command's errors reach the operator as one ``ERROR: ...`` line on stderr
(a traceback only with ``--debug``). With ``--debug``, ``-v``,
``--log-file`` or ``--log-config-append`` the engine's own logging is set
up by oslo.log exactly as for the conductor (same formats, same options);
without any of them only warnings reach stderr, and oslo.log is not even
imported, which keeps one-line answers quick.
"""

import logging
import sys

#: Loggers too chatty at INFO for a command line.
QUIET_LOGGERS = ["kazoo=WARN", "taskflow=WARN", "stevedore=WARN", "alembic=WARN",
                 "cliff=WARN", "oslo.messaging=WARN"]


def add_arguments(parser):
    """oslo.log's command-line options missing from cliff's global ones
    (cliff already has ``--debug``, ``-v/--verbose``, ``-q`` and ``--log-file``)."""
    parser.add_argument(
        "--log-config-append", metavar="PATH",
        help="a logging configuration file (Python logging's fileConfig format) "
        "applied after the others; other logging options are then ignored")


def error_text(exc):
    """The one line an operator sees for ``exc``."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    text = str(exc) or type(exc).__name__
    if not is_user_error(exc):
        # A bug rather than a mistake: the type helps the report.
        text = f"{type(exc).__name__}: {text}"
    return text


def is_user_error(exc):
    from nestedflow import exceptions
    from nestedflow.cmd.errors import CommandError

    if isinstance(exc, (exceptions.NestedflowError, CommandError, OSError, ValueError)):
        return True
    cfg = sys.modules.get("oslo_config.cfg")  # only loaded if configuration was read
    return cfg is not None and isinstance(exc, cfg.Error)


class _ErrorFormatter(logging.Formatter):
    """cliff logs a failed command's exception object: render it as one line."""

    def format(self, record):
        if isinstance(record.msg, BaseException) and not record.args:
            text = error_text(record.msg)
        else:
            text = record.getMessage()
        line = f"{record.levelname}: {text}"
        if record.exc_info:  # --debug: cliff used LOG.exception
            line += "\n" + self.formatException(record.exc_info)
        return line


class _OneLineFormatter(logging.Formatter):
    """Libraries' warnings without --debug: one line each, the exception's
    cause named instead of its traceback, and no message payload (oslo.messaging
    logs a failed notification with its whole payload)."""

    def format(self, record):
        text = record.getMessage().split(". Payload=", 1)[0]
        lines = text.splitlines() or [""]
        text = lines[0]
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            cause = (str(error).strip().splitlines() or [""])[0]
            text += f" ({type(error).__name__}: {cause})" if cause else f" ({type(error).__name__})"
        return f"{record.levelname} {record.name}: {text}"


def configure(options, stderr, cli_log):
    """Set up logging for one run of the command line."""
    cli_log.propagate = False
    cli_log.setLevel(logging.INFO)
    for handler in list(cli_log.handlers):
        cli_log.removeHandler(handler)
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(_ErrorFormatter())
    cli_log.addHandler(handler)

    verbose = options.verbose_level or 0
    if options.debug or verbose > 0 or options.log_file or options.log_config_append:
        _setup_oslo_log(options, verbose)
        return
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    warnings = logging.StreamHandler(stderr)
    warnings.setFormatter(_OneLineFormatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(warnings)
    root.setLevel(logging.WARNING)


def _setup_oslo_log(options, verbose):
    from oslo_config import cfg
    from oslo_log import log

    from nestedflow.conf import CONF

    if "log_file" not in CONF:
        try:
            log.register_options(CONF)
        except cfg.ArgsAlreadyParsedError:
            CONF.clear()
            log.register_options(CONF)
    overrides = {
        "debug": bool(options.debug or verbose > 1),
        "log_file": options.log_file,
        "log_config_append": options.log_config_append,
        # Without a file the log goes to stderr: stdout carries the answer.
        "use_stderr": not options.log_file,
    }
    for name, value in overrides.items():
        if value is not None:
            CONF.set_override(name, value)
    log.set_defaults(default_log_levels=log.get_default_log_levels() + QUIET_LOGGERS)
    log.setup(CONF, "nestedflow")
