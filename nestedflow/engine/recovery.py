"""Recovery of the stacks an embedded engine left IN_PROGRESS when it died.

A conductor's jobs outlive it on the jobboard; an embedded engine's runs
live only in its threads. So an embedded engine beats
(:class:`Heartbeat`, the ``engine_heartbeats`` table, as Heat's
``service`` table), names its runs ``<engine id>@<random>`` -- and a
traversal stored but not yet claimed ``<engine id>@queued``, in the same
transaction that stores it -- and when it starts running stacks, then at
every beat, any embedded engine resumes the stacks whose run belongs to an
engine that stopped beating: from their journal, as a conductor resumes a
job (finished actions are not run again), fencing the dead run by its
claim. A stack that cannot be resumed is failed with the reason, so none
stays IN_PROGRESS for ever.

An engine with a jobboard beats too, and stores each traversal marked
``<engine id>@unposted`` (the outbox, in the storing transaction) until a
conductor's claim replaces the mark. Should the engine die between storing
and posting, any live jobboard engine (a conductor's included) takes the
mark over at its next beat and posts the job, unless the board already
holds one for that traversal.
"""

import logging
import os
import socket
import sys
import threading
import uuid

from nestedflow import states
from nestedflow.conf import CONF

# The owner-token format lives beside the heartbeats that read it; the
# engine and the in-process dispatcher both name runs with it.
from nestedflow.db.owners import OwnerToken

LOG = logging.getLogger(__name__)

def _program():
    """The program an engine's heartbeat names (Heat's service ``binary``,
    its ``CONF.prog``): the daemons load their configuration under their own
    name (``python -m`` would give a file name); a host that never loaded
    it, the script running."""
    return getattr(CONF, "prog", None) or os.path.basename(sys.argv[0]) or None


def new_engine_id(name):
    """A heartbeat id for one engine instance: its name and a random part
    (a restarted process, or a reused pid, is another engine)."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


class Heartbeat:
    """Beats for one embedded engine and sweeps up dead engines' stacks."""

    def __init__(self, db, engine_id):
        self.db = db
        self.engine_id = engine_id
        #: ``recover()`` at every beat: set by start().
        self._recover = None
        self._interval = CONF.engine.heartbeat_interval
        self._stop = threading.Event()
        self._thread = None

    def start(self, recover=None):
        """Beat now and from now on; returns False if already started."""
        if self._thread is not None:
            return False
        self._recover = recover
        self._beat()
        self._thread = threading.Thread(target=self._loop, name="engine-heartbeat",
                                        daemon=True)
        self._thread.start()
        return True

    def _beat(self):
        self.db.beat(self.engine_id, socket.gethostname(), os.getpid(), self._interval,
                     binary=_program())

    def owner_alive(self, owner):
        """For :attr:`Runtime.owner_alive`: is the engine of run ``owner`` alive?"""
        engine_id = OwnerToken(owner or "").engine_id
        if engine_id is None:
            return None
        if engine_id == self.engine_id:
            return True
        return self.db.engine_alive(engine_id)

    def _loop(self):
        while not self._stop.wait(self._interval):
            try:
                self._beat()
                if self._recover is not None:
                    self._recover()
            except Exception as error:  # the database may be away for a while
                LOG.warning("engine %s: heartbeat failed: %s", self.engine_id, error)

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        try:
            self.db.forget_engine(self.engine_id)
        except Exception as error:
            LOG.warning("engine %s: could not remove its heartbeat: %s", self.engine_id, error)


def recover_orphans(db, dispatch):
    """Resume every stack a dead embedded engine left IN_PROGRESS;
    ``dispatch(stack_id, traversal_id, action)`` runs a traversal here.
    Returns the ids of the stacks handed to ``dispatch``."""
    resumed = []
    for stack_id, traversal_id, action in db.orphaned_stacks():
        LOG.warning("stack %s traversal %s: its engine stopped beating; resuming the %s "
                    "here", stack_id, traversal_id, action)
        dispatch(stack_id, traversal_id, action)
        resumed.append(stack_id)
    db.forget_dead_engines()
    return resumed


def unclaimed(stack, dispatcher):
    """Why ``stack``'s traversal in progress is not being run (one line):
    nobody has claimed its job -- it still carries the outbox mark -- and
    the dispatcher says nothing would (no live conductor); else None. What
    ``stack ... --wait`` tells after a few seconds."""
    owner = OwnerToken(stack.traversal_owner or "")
    if stack.status != states.IN_PROGRESS or not owner.is_unposted:
        return None  # settled, or claimed by a run
    reason = dispatcher.unserved()
    if reason is None:
        return None
    return f"{reason}, and nothing has claimed stack {stack.name}'s job"
