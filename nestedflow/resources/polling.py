"""Waiting for something outside the action: poll it, parked in between.

Between two polls the action is parked (:func:`nestedflow.pools.workers.park`):
it holds neither a worker nor a thread, so hundreds can wait at once on a
pool of a few threads, as Heat's green threads do. The wait starts at
``[heat_compat] poll_interval`` and grows 1.5 times per poll up to
``max_poll_interval``. A stopped traversal (cancelled, superseded, timed
out) ends the wait with :class:`~nestedflow.exceptions.OwnershipLost`.
"""

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.pools import workers


def poll_until(context, done, what):
    """Call ``done()`` until it returns true; ``context``: the action's
    :class:`~nestedflow.resources.base.ActionContext`; ``what`` names the
    waiter in the error."""
    wait = CONF.heat_compat.poll_interval
    while not done():
        workers.park(wait)
        if context.stop_event.is_set():
            context.still_owner()
            raise exceptions.OwnershipLost(
                f"{what}: traversal {context.traversal_id} was stopped")
        wait = min(wait * 1.5, CONF.heat_compat.max_poll_interval)
