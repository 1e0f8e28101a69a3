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

import contextlib
import threading

import futurist

_LOCAL = threading.local()


class WorkerPool(futurist.ThreadPoolExecutor):
    """``active`` actions at once, plus ``waits`` threads for actions that
    only wait (see the module docstring)."""

    def __init__(self, active, waits=0):
        super().__init__(max_workers=active + waits)
        self._gate = threading.Semaphore(active)

    def submit(self, fn, *args, **kwargs):
        return super().submit(self._run, fn, *args, **kwargs)

    def _run(self, fn, *args, **kwargs):
        with self._gate:
            _LOCAL.gate = self._gate
            try:
                return fn(*args, **kwargs)
            finally:
                _LOCAL.gate = None


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
