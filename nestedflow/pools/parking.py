"""A thread pool whose tasks can be parked without holding a thread.

A Heat-style resource polls its ``check_*_complete`` every few seconds for
as long as its object takes to build (``nestedflow.resources.heat_compat``);
Heat runs hundreds of those at once on eventlet green threads. Here each
task runs in a greenlet on one of the pool's threads; :func:`suspend`
parks it (a switch back to its thread's loop) until a given time, and the
thread meanwhile runs other tasks. A parked task is resumed by the thread
it was parked on (greenlets cannot change threads), as soon as that thread
is free after the due time.

Nothing here is monkey-patched: tasks switch only where they call
:func:`suspend`, so they must not hold a lock or an open transaction there.
"""

import heapq
import itertools
import queue
import threading
import time
import weakref

import futurist
import greenlet

_LOCAL = threading.local()
#: Longest a thread with nothing queued sleeps before looking again.
_IDLE_CHECK = 1.0


class GreenThreadPool(futurist.ThreadPoolExecutor):
    """At most ``max_workers`` threads; each task is a greenlet.

    A subclass of futurist's pool so that TaskFlow takes it as a thread
    pool; none of futurist's threads or queues is used.
    """

    def __init__(self, max_workers):
        super().__init__(max_workers=max_workers)
        self._tasks = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = []
        self._waiting_threads = 0
        #: Tasks put in the queue and not yet taken by a thread.
        self._queued = 0
        self._stopping = False

    @property
    def alive(self):
        return not self._stopping

    @property
    def threads(self):
        """Threads started so far (never more than ``max_workers``)."""
        return len(self._threads)

    def submit(self, fn, *args, **kwargs):
        future = futurist.Future()
        with self._lock:
            if self._stopping:
                raise RuntimeError("cannot submit to a pool that was shut down")
            self._queued += 1
            # A thread per queued task not yet matched by an idle thread.
            start = (self._queued > self._waiting_threads
                     and len(self._threads) < self._max_workers)
            if start:
                thread = threading.Thread(target=self._loop, daemon=True,
                                          name=f"nestedflow-worker-{len(self._threads)}")
                self._threads.append(thread)
        self._tasks.put((future, fn, args, kwargs))
        if start:
            thread.start()
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        with self._lock:
            if self._stopping:
                threads = []
            else:
                self._stopping = True
                threads = list(self._threads)
        for _ in threads:
            self._tasks.put(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()

    def _loop(self):
        hub = _Hub()
        _LOCAL.hub = hub
        stopping = False
        while True:
            task = hub.due()
            if task is not None:
                hub.switch(task)
                continue
            if stopping:
                if not hub.parked:
                    return
                # Not another get(): it could take the stop of another thread.
                time.sleep(hub.wait_time())
                continue
            timeout = hub.wait_time()
            with self._lock:
                self._waiting_threads += 1
            try:
                item = self._tasks.get(timeout=_IDLE_CHECK if timeout is None else timeout)
            except queue.Empty:
                continue
            finally:
                with self._lock:
                    self._waiting_threads -= 1
            if item is not None:
                with self._lock:
                    self._queued -= 1
            if item is None:
                # Shut down: parked tasks are still finished (their futures done).
                stopping = True
                continue
            hub.switch(greenlet.greenlet(self._run_task), item)
            # Not held while idle: the task's arguments reach its engine and
            # the whole flow of a traversal that has ended.
            item = None

    def _run_task(self, item):
        future, fn, args, kwargs = item
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn(*args, **kwargs)
        except BaseException as error:  # noqa: B902 - handed to the waiter
            future.set_exception(error)
        else:
            future.set_result(result)


class _Hub:
    """One thread's parked tasks: (due time, order, greenlet), earliest first."""

    def __init__(self):
        self.parked = []
        self._order = itertools.count()

    def park(self, task, until):
        heapq.heappush(self.parked, (until, next(self._order), task))

    def due(self):
        if self.parked and self.parked[0][0] <= time.monotonic():
            return heapq.heappop(self.parked)[2]
        return None

    def wait_time(self):
        if not self.parked:
            return None
        return max(0.0, min(_IDLE_CHECK, self.parked[0][0] - time.monotonic()))

    @staticmethod
    def switch(task, *args):
        # Returns when the task ends or parks itself.
        task.switch(*args)


def can_suspend():
    """Is the caller a task of a :class:`GreenThreadPool` (so it may park)?"""
    return getattr(_LOCAL, "hub", None) is not None and greenlet.getcurrent().parent is not None


def suspend(seconds):
    """Park the calling task for ``seconds``; its thread runs others meanwhile.

    Outside a pool's task it sleeps instead.
    """
    if not can_suspend():
        time.sleep(seconds)
        return
    current = greenlet.getcurrent()
    _LOCAL.hub.park(current, time.monotonic() + seconds)
    current.parent.switch()


class TaskLocal:
    """``threading.local`` for code that may run as a pool task: attributes
    are per greenlet (so per task, and per thread outside a pool), since the
    tasks parked on one thread share its ``threading.local``."""

    def __init__(self):
        object.__setattr__(self, "_values", weakref.WeakKeyDictionary())

    def _mine(self):
        return self._values.setdefault(greenlet.getcurrent(), {})

    def __getattr__(self, name):
        try:
            return self._mine()[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._mine()[name] = value
