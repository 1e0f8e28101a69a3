"""One claimed job being run by a conductor (:mod:`nestedflow.conductor.
service`), and how it is suspended at a safe point: on a stop, or when
the ZooKeeper session its claim lived in expired."""

import logging
import threading

from nestedflow import exceptions

LOG = logging.getLogger(__name__)


class ClaimedRun:
    """A job this process claimed, and the run of its traversal."""

    def __init__(self, job, owner, stack_id, traversal_id, action):
        self.job = job
        self.owner = owner
        self.stack_id = stack_id
        self.traversal_id = traversal_id
        self.action = action
        self.engine = None
        self.suspend_requested = False
        self.done = threading.Event()
        self.lock = threading.Lock()

    def attach(self, engine):
        """runner.run_traversal's ``on_engine``: False means do not start."""
        with self.lock:
            self.engine = engine
            return not self.suspend_requested

    def suspend(self):
        with self.lock:
            self.suspend_requested = True
            engine = self.engine
        if engine is None:
            return
        try:
            # TaskFlow stops scheduling atoms; the ones running finish.
            engine.suspend()
        except exceptions.OwnershipLost as error:
            # suspend() journals the SUSPENDING state, and the journal refuses
            # a fenced run's writes: this run is stopping at its next write
            # anyway, and the caller (a session loss, a shutdown) must go on.
            LOG.info("run %s: already fenced off, nothing to suspend (%s)", self.owner, error)
        except Exception as error:
            # The journal could not be written (database down): the run's own
            # next write fails the same way, which ends it; the caller goes on.
            LOG.warning("run %s: could not suspend it: %s", self.owner, error)
