"""A dispatcher that runs nothing: for tools that drive traversals themselves."""

from nestedflow.dispatch import base


class HeldDispatcher(base.Dispatcher):
    """Keeps every dispatched traversal in :attr:`held` instead of running it.

    Benchmarks time the flow build and compile of a stored stack with it,
    and tests run single tasks of a traversal by hand.
    """

    runs_in_process = False

    def __init__(self):
        #: ``(stack_id, traversal_id, action)`` of each dispatch, oldest first.
        self.held = []

    def dispatch(self, stack_id, traversal_id, action):
        self.held.append((stack_id, traversal_id, action))

    def add_done_callback(self, callback):
        """Nothing ends here, so nothing is ever called back."""

    def close(self):
        """Nothing runs, so nothing to wait for."""
