"""The command line's own error, in a module of its own: the log set-up
(``cmd.logs``) and the commands raise it, and ``cmd.shell`` -- which imports
both -- catches it, so none of them imports another for it."""


class CommandError(Exception):
    """A user mistake found by the command line itself (exit 1, one ``ERROR:`` line)."""
