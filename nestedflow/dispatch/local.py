"""Embedded dispatch: traversals run in this process's threads."""

import threading

from nestedflow import exceptions
from nestedflow.dispatch import base
from nestedflow.dispatch.slots import SlotGate
from nestedflow.flows import runner

#: Traversals one embedded engine runs at once (each has its own workers).
JOB_SLOTS = 8


class LocalDispatcher(base.Dispatcher):
    runs_in_process = True

    def __init__(self, runtime, backend, slots=JOB_SLOTS):
        self._runtime = runtime
        self._backend = backend
        runtime.slots = SlotGate(slots)
        self._threads = set()
        self._lock = threading.Lock()
        self._callbacks = []
        self._closed = False

    def add_done_callback(self, callback):
        self._callbacks.append(callback)

    def dispatch(self, stack_id, traversal_id, action):
        if self._closed:
            raise exceptions.NestedflowError("engine is closed")
        # A thread per traversal, gated by the slots: a waiting parent gives
        # its slot to its children instead of pinning a pool thread.
        thread = threading.Thread(target=self._run, args=(stack_id, traversal_id, action),
                                  name=f"traversal-{traversal_id[:8]}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _run(self, stack_id, traversal_id, action):
        try:
            with self._runtime.slots.job(traversal_id):
                runner.run_traversal(self._runtime, self._backend, stack_id, traversal_id,
                                     action, first_run=True)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())
            for callback in self._callbacks:
                callback()

    def close(self):
        self._closed = True
        self.join()

    def join(self):
        """Until no traversal runs: a waiter wakes when its stack settles,
        before the run has flushed its journal and ended."""
        while True:
            with self._lock:
                threads = list(self._threads)
            if not threads:
                return
            for thread in threads:
                thread.join()
