"""The thread pool a traversal's resource actions run in.

``max_workers`` bounds the resource actions of one traversal that run at
once. An action that waits for a nested stack is not running: it sleeps
until the child's completion notification. If it kept its worker, a
parent with more children than workers would have at most ``max_workers``
children in flight, and every child that finished would leave a job slot
idle in the cluster until the parent's next action posted the next child.
So an action gives its worker up while it waits (:func:`waiting`), and the
pool has a thread more for each such action, up to ``max_nested_waits``.
"""

import collections
import contextlib
import threading
import time

from nestedflow.pools import parking

_LOCAL = threading.local()


class WorkerPool(parking.GreenThreadPool):
    """``active`` actions at once, plus ``waits`` threads for actions that
    only wait (see the module docstring); an action that :func:`park` s
    holds neither."""

    def __init__(self, active, waits=0):
        super().__init__(max_workers=active + waits)
        self._gate = threading.Semaphore(active)
        self._count_lock = threading.Lock()
        self._in_flight = 0

    def submit(self, fn, *args, **kwargs):
        with self._count_lock:
            self._in_flight += 1
        try:
            return super().submit(self._run, fn, *args, **kwargs)
        except BaseException:
            self._ended()
            raise

    def _run(self, fn, *args, **kwargs):
        try:
            with self._gate:
                _LOCAL.gate = self._gate
                try:
                    return fn(*args, **kwargs)
                finally:
                    _LOCAL.gate = None
        finally:
            # Before the future is done: whoever saw every future done sees
            # the pool idle.
            self._ended()

    def _ended(self):
        with self._count_lock:
            self._in_flight -= 1

    def idle(self):
        """No action queued or running: the pool can serve another run."""
        with self._count_lock:
            return self.alive and self._in_flight == 0


#: Idle pools a process keeps for its next runs, and for how long.
KEEP_IDLE_POOLS = 8
IDLE_POOL_SECONDS = 30.0


class PoolCache:
    """Worker pools of finished runs, handed to the next runs of the same size.

    A pool belongs to one run at a time (its gate counts that run's
    actions), but its threads outlive the run: the pool starts a
    thread on each of its first ``max_workers`` submissions, on the path of
    a run's first actions -- a small stack's run paid for four thread
    starts. At most :data:`KEEP_IDLE_POOLS` wait here, each at most
    :data:`IDLE_POOL_SECONDS`.
    """

    def __init__(self, keep=KEEP_IDLE_POOLS, idle_for=IDLE_POOL_SECONDS):
        self._keep = keep
        self._idle_for = idle_for
        self._lock = threading.Lock()
        self._idle = collections.deque()  # (since, (active, waits), pool), oldest first
        self._closed = False

    def take(self, active, waits=0):
        """A pool of ``active`` + ``waits`` threads for one run."""
        stale = []
        with self._lock:
            stale = self._expired(time.monotonic())
            for entry in reversed(self._idle):  # the warmest first
                if entry[1] == (active, waits):
                    self._idle.remove(entry)
                    pool = entry[2]
                    break
            else:
                pool = None
        for old in stale:
            old.shutdown(wait=False)
        return pool if pool is not None else WorkerPool(active, waits)

    def give_back(self, pool, active, waits=0):
        """The run using ``pool`` has ended; keep it if it is idle and there is room."""
        stale = []
        with self._lock:
            now = time.monotonic()
            stale = self._expired(now)
            if not self._closed and pool.idle():
                self._idle.append((now, (active, waits), pool))
                pool = None
                while len(self._idle) > self._keep:
                    stale.append(self._idle.popleft()[2])
        for old in stale if pool is None else [*stale, pool]:
            old.shutdown(wait=False)

    def _expired(self, now):
        stale = []
        while self._idle and now - self._idle[0][0] > self._idle_for:
            stale.append(self._idle.popleft()[2])
        return stale

    def close(self):
        """Stop every idle pool's threads; pools given back later are stopped too."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, collections.deque()
        for _, _, pool in idle:
            pool.shutdown(wait=False)


@contextlib.contextmanager
def waiting():
    """Give this thread's worker up while the block only waits.

    Outside a :class:`WorkerPool` (a plain executor, a test) it does nothing.
    """
    gate = getattr(_LOCAL, "gate", None)
    if gate is None:
        yield
        return
    gate.release()
    try:
        yield
    finally:
        gate.acquire()


def park(seconds):
    """Give this action's worker *and thread* up for ``seconds``
    (:mod:`nestedflow.pools.parking`): hundreds of actions can wait between
    polls at once on a pool of a few threads.

    Outside a :class:`WorkerPool` it sleeps.
    """
    gate = getattr(_LOCAL, "gate", None)
    if gate is None or not parking.can_suspend():
        time.sleep(seconds)
        return
    _LOCAL.gate = None
    gate.release()
    try:
        parking.suspend(seconds)
    finally:
        # Back on this thread, possibly after other actions set or cleared
        # their own gate here: this action holds a worker again.
        gate.acquire()
        _LOCAL.gate = gate
