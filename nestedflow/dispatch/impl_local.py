"""Embedded dispatch: traversals run in this process's threads."""

import threading

from nestedflow import exceptions
from nestedflow.db import owners
from nestedflow.dispatch import base
from nestedflow.dispatch.slots import SlotGate
from nestedflow.flows import runner

#: Traversals one embedded engine runs at once (each has its own workers).
JOB_SLOTS = 8


class LocalDispatcher(base.Dispatcher):
    runs_in_process = True

    def __init__(self, runtime, backend, slots=None, engine_id=None):
        # ``slots``: a job slot count of its own instead of the runtime's.
        self._runtime = runtime if slots is None else runtime.with_parts(slots=SlotGate(slots))
        self._backend = backend
        #: Runs are named ``<engine_id>@<random>`` (db.owners): a
        #: stack whose run's engine stopped beating is known orphaned.
        self._engine_id = engine_id
        self._running = set()
        self._threads = set()
        self._lock = threading.Lock()
        self._callbacks = []
        self._closed = False

    @classmethod
    def from_url(cls, url, *, runtime, backend):
        return cls(runtime, backend)

    def add_done_callback(self, callback):
        self._callbacks.append(callback)

    def dispatch(self, stack_id, traversal_id, action):
        self._start(stack_id, traversal_id, action, first_run=True)

    def resume(self, stack_id, traversal_id, action):
        """Run a traversal another engine's run left unfinished, from its
        journal (unless this engine already runs it)."""
        self._start(stack_id, traversal_id, action, first_run=False)

    def _start(self, stack_id, traversal_id, action, first_run):
        if self._closed:
            raise exceptions.NestedflowError("engine is closed")
        # A thread per traversal, gated by the slots: a waiting parent gives
        # its slot to its children instead of pinning a pool thread.
        thread = threading.Thread(target=self._run,
                                  args=(stack_id, traversal_id, action, first_run),
                                  name=f"traversal-{traversal_id[:8]}", daemon=True)
        with self._lock:
            if not first_run and traversal_id in self._running:
                return
            self._running.add(traversal_id)
            self._threads.add(thread)
        thread.start()

    def _run(self, stack_id, traversal_id, action, first_run):
        owner = owners.OwnerToken.run(self._engine_id) if self._engine_id else None
        try:
            with self._runtime.slots.job(traversal_id):
                runner.run_traversal(self._runtime, self._backend, stack_id, traversal_id,
                                     action, owner=owner, first_run=first_run)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())
                self._running.discard(traversal_id)
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
