"""How a traversal gets to whoever runs it."""

import abc


class Dispatcher(abc.ABC):
    """Hands traversals to something that runs them.

    The embedded engine runs them in local threads; the distributed one
    posts a job that a conductor claims. Either way the traversal is run by
    :func:`nestedflow.flows.runner.run_traversal`.
    """

    #: True when traversals run in this process (callers must keep it alive).
    runs_in_process = True

    @abc.abstractmethod
    def dispatch(self, stack_id, traversal_id, action):
        """Arrange for the traversal to run; returns at once."""

    @abc.abstractmethod
    def add_done_callback(self, callback):
        """Call ``callback()`` whenever a traversal run by this process ends
        (a dispatcher that runs nothing itself may ignore it)."""

    @abc.abstractmethod
    def close(self):
        """Stop accepting work; wait for what this process runs itself."""
