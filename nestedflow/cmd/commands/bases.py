"""The cliff command classes nestedflow's commands derive from.

cliff's ``Command.get_epilog`` scans every installed distribution
(``importlib.metadata.packages_distributions``) on each run to say which
plugin provides the command -- a tenth of a second of every ``nestedflow``
invocation, and the answer is always nestedflow. These classes skip it.
"""

from cliff import command, lister, show


class _Epilog:
    #: True: the command reads what only an Engine in this process has (its
    #: database or plugin registry), so it never goes to a resident engine.
    embedded_only = False

    def get_epilog(self):
        """No "provided by plugin" line: every command here is nestedflow's."""
        return ""


class Command(_Epilog, command.Command):
    """cliff's Command (see the module docstring)."""


class ShowOne(_Epilog, show.ShowOne):
    """cliff's ShowOne (see the module docstring)."""


class Lister(_Epilog, lister.Lister):
    """cliff's Lister (see the module docstring)."""
