"""Waiting for a stack a command started, and what the command then prints.

Without a jobboard the engine runs traversals in this process's threads, so
a command that starts one waits for the stack to settle before exiting,
even without ``--wait``: leaving earlier would kill the traversal half-way
(doc/source/cli.rst says so). With a jobboard a conductor owns the
traversal and the command returns at once unless ``--wait`` is given.
"""

from nestedflow import exceptions, states

IN_PROCESS_NOTICE = "running in-process; waiting for stack to settle"
#: Seconds ``--wait`` gives a conductor to claim the job before asking
#: whether any conductor serves the jobboard at all.
UNCLAIMED_GRACE = 5.0


def add_wait_argument(parser):
    parser.add_argument(
        "--wait", action="store_true",
        help="show progress and wait until the stack settles (commands without a "
        "jobboard always wait: the stack is deployed by this process)")
    parser.add_argument(
        "--keep-waiting", action="store_true",
        help="with --wait and a jobboard no conductor serves: keep waiting for one "
        "(by default the command says so after a few seconds and exits 1)")


def _show_progress(app, parsed_args):
    isatty = getattr(app.stderr, "isatty", None)
    return (getattr(parsed_args, "formatter", "table") == "table"
            and bool(isatty and isatty()))


def settle(app, parsed_args, started):
    """Wait as asked (or as in-process execution requires).

    Returns ``(stack, waited)``: the final Stack (None when a deleted stack
    vanished) and whether the command waited at all.
    """
    from nestedflow.cmd import progress  # rich: only loaded when waiting

    engine = app.engine
    app.followed_stack = started.name  # named if the wait is interrupted
    if parsed_args.wait:
        if not getattr(engine, "runs_in_process", True):
            _check_served(app, engine, started, getattr(parsed_args, "keep_waiting", False))
        if _show_progress(app, parsed_args):
            final = progress.wait_with_progress(engine, started.id,
                                                console=progress.make_console(app.stderr))
        else:
            final = progress.wait_quietly(engine, started.id)
        return final, True
    if getattr(engine, "runs_in_process", True):
        app.stderr.write(IN_PROCESS_NOTICE + "\n")
        app.stderr.flush()
        return progress.wait_quietly(engine, started.id), True
    # A conductor owns the traversal; nothing here has to stay alive.
    return started, False


def _check_served(app, engine, started, keep_waiting):
    """After :data:`UNCLAIMED_GRACE` seconds, say when no conductor is
    there to run the traversal (Engine.unclaimed) -- instead of waiting
    silently for ever -- and stop unless asked to keep waiting."""
    unclaimed = getattr(engine, "unclaimed", None)
    if unclaimed is None:  # an RPC engine too old to tell
        return
    try:
        engine.wait(started.id, timeout=UNCLAIMED_GRACE)
        return  # settled already
    except exceptions.WaitTimeout:
        pass
    except exceptions.StackNotFound:
        return
    reason = unclaimed(started.id)
    if reason is None:
        return
    message = (f"{reason}; it runs once a conductor serves the jobboard "
               "(nestedflow-conductor)")
    if not keep_waiting:
        raise exceptions.NestedflowError(
            f"{message}. Not waiting: pass --keep-waiting to wait for a conductor")
    app.stderr.write(f"WARNING: {message}; waiting for one (--keep-waiting)\n")
    app.stderr.flush()


def succeeded(stack, action):
    return stack.action == action and stack.status == states.COMPLETE


def failure_line(stack):
    reason = f": {stack.status_reason}" if stack.status_reason else ""
    return f"ERROR: Stack {stack.name} {stack.action}_{stack.status}{reason}\n"
