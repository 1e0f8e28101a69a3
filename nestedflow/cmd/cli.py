"""The ``nestedflow`` command line.

::

    nestedflow [--db-url URL] [--jobboard-url URL] [--transport-url URL]
               [--config-file FILE ...] [-f table|json] [--debug]
               stack create|update|delete|list|show|resources|events|outputs|
                     suspend|resume|check|cancel ...
    nestedflow conductor run [--name NAME] [--job-slots N] ...   (= nestedflow-conductor)
    nestedflow conductor list
    nestedflow db sync

Without a jobboard the engine runs traversals in this process's threads, so
every command that starts one waits for the stack to settle before exiting,
even without ``--wait``: leaving earlier would kill the traversal half-way.
"""

import argparse
import os
import sys

from nestedflow import exceptions
from nestedflow.cmd import conductor as conductor_cmd
from nestedflow.cmd import output, progress

DEFAULT_CONFIG_FILE = "/etc/nestedflow/nestedflow.conf"
IN_PROCESS_NOTICE = "running in-process; waiting for stack to settle"


class CommandError(Exception):
    """A user mistake found by the CLI itself (exit 1, one ``ERROR:`` line)."""


def make_engine(db_url=None, jobboard_url=None, transport_url=None):
    """Build the engine; tests replace this function to inject a fake."""
    from nestedflow.engine.service import Engine

    return Engine(db_url=db_url, jobboard_url=jobboard_url, transport_url=transport_url)


# -- argument parsing ----------------------------------------------------------


def parse_parameters(items):
    """``["k=v", ...]`` to a dict; the value may itself contain ``=``."""
    params = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CommandError(f"invalid parameter {item!r}: expected KEY=VALUE")
        params[key] = value
    return params


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of minutes: {text!r}")
    return value


def _format_parent():
    # -f is accepted both before and after the subcommand; SUPPRESS keeps the
    # subcommand's copy from overwriting a global -f with its default.
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "-f", "--format", choices=output.FORMATS, default=argparse.SUPPRESS,
        help="output format (default: table)",
    )
    return parent


def _version():
    try:
        from importlib.metadata import version

        return version("nestedflow")
    except Exception:  # not installed: running from a source tree
        return "unknown"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="nestedflow",
        description="Heat-style stack orchestration on OpenStack TaskFlow.",
    )
    parser.add_argument(
        "--db-url", metavar="URL",
        help="SQLAlchemy URL of the state database (default: $NESTEDFLOW_DB_URL, "
        "else [database] connection, else an SQLite file in the user's data dir)",
    )
    parser.add_argument(
        "--jobboard-url", metavar="URL",
        help="zookeeper://HOST:PORT/ROOT to hand traversals to conductors "
        "(default: $NESTEDFLOW_JOBBOARD_URL, else [engine] jobboard_url, else in-process)",
    )
    parser.add_argument(
        "--transport-url", metavar="URL",
        help="oslo.messaging transport (default: $NESTEDFLOW_TRANSPORT_URL, "
        "else [engine] transport_url)",
    )
    parser.add_argument(
        "--config-file", metavar="FILE", action="append", dest="config_files",
        help=f"oslo.config file, may be repeated (default: {DEFAULT_CONFIG_FILE} if it exists)",
    )
    parser.add_argument(
        "-f", "--format", choices=output.FORMATS, default="table",
        help="output format (default: table)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")

    fmt = _format_parent()
    groups = parser.add_subparsers(dest="group", metavar="{stack,conductor,db}", required=True)

    # -- stack ---------------------------------------------------------------
    stack = groups.add_parser("stack", help="manage stacks")
    cmds = stack.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, help_text, func, stack_arg=True, wait=False):
        p = cmds.add_parser(name, help=help_text, description=help_text, parents=[fmt])
        if stack_arg:
            p.add_argument("stack", metavar="NAME_OR_ID", help="stack name or id")
        if wait:
            p.add_argument(
                "--wait", action="store_true",
                help="show progress and wait until the stack settles",
            )
        p.set_defaults(func=func)
        return p

    def add_template_args(p):
        p.add_argument("-t", "--template", required=True, metavar="FILE",
                       help="template file")
        p.add_argument(
            "-P", "--parameter", action="append", default=[], metavar="KEY=VALUE",
            dest="parameters", help="template parameter, may be repeated",
        )
        p.add_argument("-e", "--environment", metavar="FILE", help="environment file")

    p = add("create", "create a stack", cmd_stack_create, stack_arg=False, wait=True)
    p.add_argument("name", metavar="NAME", help="name of the new stack")
    add_template_args(p)
    p.add_argument("--disable-rollback", action="store_true",
                   help="leave a failed create as CREATE_FAILED instead of rolling back")
    p.add_argument("--timeout", type=_positive_int, metavar="MIN",
                   help="stack creation timeout in minutes")

    p = add("update", "update a stack", cmd_stack_update, wait=True)
    add_template_args(p)
    p.add_argument("--existing", action="store_true",
                   help="patch update: keep the stack's current template parts, "
                   "parameters and environment where not given")
    rollback = p.add_mutually_exclusive_group()
    rollback.add_argument("--rollback", dest="disable_rollback", action="store_const",
                          const=False, help="roll back if the update fails")
    rollback.add_argument("--no-rollback", dest="disable_rollback", action="store_const",
                          const=True, help="do not roll back if the update fails")
    p.set_defaults(disable_rollback=None)

    add("delete", "delete a stack", cmd_stack_delete, wait=True)
    p = add("list", "list stacks", cmd_stack_list, stack_arg=False)
    p.add_argument("--show-nested", action="store_true", help="include nested stacks")
    add("show", "show a stack", cmd_stack_show)
    for name, help_text, handler in (("resources", "list a stack's resources",
                                      cmd_stack_resources),
                                     ("events", "list a stack's events", cmd_stack_events)):
        p = add(name, help_text, handler)
        p.add_argument("--nested-depth", type=int, default=0, metavar="N",
                       help="include nested stacks down to N levels")
    add("outputs", "show a stack's outputs", cmd_stack_outputs)
    add("suspend", "suspend a stack", cmd_stack_suspend, wait=True)
    add("resume", "resume a suspended stack", cmd_stack_resume, wait=True)
    add("check", "check a stack's resources", cmd_stack_check, wait=True)
    p = add("cancel", "cancel a stack update in progress", cmd_stack_cancel, wait=True)
    p.add_argument("--no-rollback", dest="rollback", action="store_false",
                   help="stop the update without rolling back")

    # -- conductor -----------------------------------------------------------
    conductor = groups.add_parser("conductor", help="run or inspect conductor daemons")
    c_cmds = conductor.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = c_cmds.add_parser(
        "run", help="run a conductor in the foreground (same as nestedflow-conductor)",
        description="Claim stack traversal jobs from the jobboard (--jobboard-url) and "
        "run them; SIGTERM hands running jobs back at a safe point.")
    conductor_cmd.add_run_arguments(p, with_urls=False)
    p.set_defaults(func=cmd_conductor_run)
    p = c_cmds.add_parser("list", help="list live conductors and the jobs they hold",
                          parents=[fmt])
    p.set_defaults(func=cmd_conductor_list)

    # -- db ------------------------------------------------------------------
    db = groups.add_parser("db", help="manage the database")
    db_cmds = db.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = db_cmds.add_parser("sync", help="create or upgrade the database schema",
                           parents=[fmt])
    p.set_defaults(func=cmd_db_sync)

    return parser


# -- context ----------------------------------------------------------------


def _load_config(config_files):
    from nestedflow.conf import CONF

    if config_files is None:
        config_files = [DEFAULT_CONFIG_FILE] if os.path.isfile(DEFAULT_CONFIG_FILE) else []
    # default_config_files is explicit so oslo.config does not go looking in
    # ~/.nestedflow or /etc on its own.
    CONF(args=[], project="nestedflow", default_config_files=config_files)
    return CONF


def _first(*values):
    for value in values:
        if value:
            return value
    return None


class Context:
    """Resolved settings plus a lazily built engine for one command."""

    def __init__(self, args, stdout=None, stderr=None):
        self.args = args
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.out = output.Renderer(args.format, self.stdout)
        self._engine = None
        conf = _load_config(args.config_files)
        self.db_url = _first(
            args.db_url, os.environ.get("NESTEDFLOW_DB_URL"), conf.database.connection
        )
        self.jobboard_url = _first(
            args.jobboard_url, os.environ.get("NESTEDFLOW_JOBBOARD_URL"), conf.engine.jobboard_url
        )
        self.transport_url = _first(
            args.transport_url,
            os.environ.get("NESTEDFLOW_TRANSPORT_URL"),
            conf.engine.transport_url,
        )

    @property
    def engine(self):
        if self._engine is None:
            self._engine = make_engine(
                db_url=self.db_url,
                jobboard_url=self.jobboard_url,
                transport_url=self.transport_url,
            )
        return self._engine

    def close(self):
        if self._engine is not None:
            engine, self._engine = self._engine, None
            engine.close()

    def warn(self, text):
        self.stderr.write(text + "\n")
        self.stderr.flush()

    @property
    def show_progress(self):
        isatty = getattr(self.stderr, "isatty", None)
        return self.out.format == "table" and bool(isatty and isatty())

    def stack_id(self, name_or_id):
        return self.engine.get_stack(name_or_id).id


# -- helpers for the commands ---------------------------------------------------


def _existing_file(path, what):
    if not os.path.exists(path):
        raise CommandError(f"{what} file {path} not found")
    if not os.path.isfile(path):
        raise CommandError(f"{what} file {path} is not a regular file")
    return path


def _template_kwargs(args):
    kwargs = {
        "template": _existing_file(args.template, "template"),
        "parameters": parse_parameters(args.parameters) or None,
    }
    if args.environment:
        kwargs["environment"] = _existing_file(args.environment, "environment")
    return kwargs


def _finish(ctx, started, action, wait, success=None):
    """Wait as asked (or as in-process execution requires), print, exit code.

    ``success(stack)`` decides the exit code; by default the stack must end
    ``<action>_COMPLETE``.
    """
    engine = ctx.engine
    if wait:
        if ctx.show_progress:
            console = output.make_console(ctx.stderr)
            final = progress.wait_with_progress(engine, started.id, console=console)
        else:
            final = progress.wait_quietly(engine, started.id)
    elif getattr(engine, "runs_in_process", True):
        ctx.warn(IN_PROCESS_NOTICE)
        final = progress.wait_quietly(engine, started.id)
    else:
        # A conductor owns the traversal; nothing here has to stay alive.
        ctx.out.stack(started)
        return 0

    if final is None:
        if action == "DELETE":
            if ctx.out.is_json:
                ctx.out.data({"id": started.id, "name": started.name, "deleted": True})
            else:
                ctx.out.message(f"Stack {started.name} deleted")
            return 0
        raise exceptions.StackNotFound(started.id)

    if success is None:
        ok = final.action == action and final.status == "COMPLETE"
    else:
        ok = success(final)
    if ok and action == "DELETE":
        if ctx.out.is_json:
            ctx.out.stack(final)
        else:
            ctx.out.message(f"Stack {final.name} deleted")
        return 0
    ctx.out.stack(final)
    if ok:
        return 0
    reason = f": {final.status_reason}" if final.status_reason else ""
    ctx.warn(f"ERROR: Stack {final.name} {final.action}_{final.status}{reason}")
    return 1


# -- commands ---------------------------------------------------------------


def cmd_stack_create(ctx, args):
    kwargs = _template_kwargs(args)
    stack = ctx.engine.create_stack(
        args.name,
        disable_rollback=args.disable_rollback,
        timeout=args.timeout,
        **kwargs,
    )
    return _finish(ctx, stack, "CREATE", args.wait)


def cmd_stack_update(ctx, args):
    kwargs = _template_kwargs(args)
    stack_id = ctx.stack_id(args.stack)
    stack = ctx.engine.update_stack(
        stack_id,
        existing=args.existing,
        disable_rollback=args.disable_rollback,
        **kwargs,
    )
    return _finish(ctx, stack, "UPDATE", args.wait)


def cmd_stack_delete(ctx, args):
    stack = ctx.engine.delete_stack(ctx.stack_id(args.stack))
    return _finish(ctx, stack, "DELETE", args.wait)


def cmd_stack_suspend(ctx, args):
    stack = ctx.engine.suspend_stack(ctx.stack_id(args.stack))
    return _finish(ctx, stack, "SUSPEND", args.wait)


def cmd_stack_resume(ctx, args):
    stack = ctx.engine.resume_stack(ctx.stack_id(args.stack))
    return _finish(ctx, stack, "RESUME", args.wait)


def cmd_stack_check(ctx, args):
    stack = ctx.engine.check_stack(ctx.stack_id(args.stack))
    return _finish(ctx, stack, "CHECK", args.wait)


def cmd_stack_cancel(ctx, args):
    stack = ctx.engine.cancel_update(ctx.stack_id(args.stack), rollback=args.rollback)
    if args.rollback:
        # The cancelled update rolls back: success is a clean rollback.
        return _finish(ctx, stack, "ROLLBACK", args.wait)
    # Without rollback the update stops as UPDATE_FAILED, which is what was asked.
    return _finish(ctx, stack, "UPDATE", args.wait, success=lambda s: s.status != "IN_PROGRESS")


def cmd_stack_list(ctx, args):
    ctx.out.stack_list(ctx.engine.list_stacks(show_nested=args.show_nested))
    return 0


def cmd_stack_show(ctx, args):
    ctx.out.stack(ctx.engine.get_stack(args.stack))
    return 0


def cmd_stack_resources(ctx, args):
    ctx.out.resources(ctx.engine.list_resources(ctx.stack_id(args.stack),
                                                nested_depth=args.nested_depth),
                      nested=args.nested_depth > 0)
    return 0


def cmd_stack_events(ctx, args):
    ctx.out.events(ctx.engine.list_events(ctx.stack_id(args.stack),
                                          nested_depth=args.nested_depth),
                   nested=args.nested_depth > 0)
    return 0


def cmd_stack_outputs(ctx, args):
    ctx.out.outputs(ctx.engine.get_stack(args.stack).outputs)
    return 0


def cmd_conductor_run(ctx, args):
    # The global --db-url/--jobboard-url/--transport-url/--config-file/--debug
    # are the conductor's too.
    return conductor_cmd.run_from_args(args)


def cmd_conductor_list(ctx, args):
    from nestedflow.conductor import listing

    if not ctx.jobboard_url:
        raise CommandError("no jobboard: pass --jobboard-url zookeeper://HOST:PORT/ROOT "
                           "(or set NESTEDFLOW_JOBBOARD_URL or [engine] jobboard_url)")
    try:
        described = listing.describe(ctx.jobboard_url)
    except exceptions.NestedflowError:
        raise
    except Exception as exc:
        raise CommandError(f"cannot read the jobboard {ctx.jobboard_url}: "
                           f"{type(exc).__name__}: {exc}") from exc
    ctx.out.conductors(described)
    return 0


def _display_url(url):
    if url is None:
        from nestedflow.conf.database import default_url

        url = default_url()
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy understands: db_sync will say so
        return url


def cmd_db_sync(ctx, args):
    from nestedflow.db import migration

    try:
        migration.db_sync(ctx.db_url)
    except exceptions.NestedflowError:
        raise
    except Exception as exc:
        from sqlalchemy.exc import SQLAlchemyError

        if isinstance(exc, SQLAlchemyError):
            raise CommandError(f"database sync failed: {exc}") from exc
        raise
    url = _display_url(ctx.db_url)
    if ctx.out.is_json:
        ctx.out.data({"database": url, "status": "up to date"})
    else:
        ctx.out.message(f"database at {url} is up to date")
    return 0


# -- entry point -------------------------------------------------------------

_USER_ERRORS = (exceptions.NestedflowError, CommandError, OSError)


def _error_text(exc):
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc) or type(exc).__name__


def main(argv=None, stdout=None, stderr=None):
    """Run one command; returns the exit code."""
    stderr = stderr if stderr is not None else sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage error (2) or --help / --version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)

    ctx = None
    try:
        try:
            ctx = Context(args, stdout=stdout, stderr=stderr)
            return args.func(ctx, args)
        finally:
            if ctx is not None:
                ctx.close()
    except KeyboardInterrupt:
        stderr.write("Interrupted; the stack may still be IN_PROGRESS.\n")
        return 130
    except Exception as exc:
        if args.debug or not _is_user_error(exc):
            raise
        stderr.write(f"ERROR: {_error_text(exc)}\n")
        return 1


def _is_user_error(exc):
    if isinstance(exc, _USER_ERRORS):
        return True
    try:
        from oslo_config import cfg
    except ImportError:  # pragma: no cover - oslo.config is a hard dependency
        return False
    return isinstance(exc, cfg.Error)


if __name__ == "__main__":
    sys.exit(main())
