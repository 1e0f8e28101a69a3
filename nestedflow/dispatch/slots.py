"""Job slots that a job gives up while it only waits for its children.

A parent stack's task that waits for a nested stack must not hold a slot
the child needs, or a tree deeper than the slot count deadlocks; so the
first waiter of a job releases the job's slot and the last one takes it
back before the job goes on.
"""

import contextlib
import threading


class SlotGate:
    def __init__(self, slots):
        self._slots = threading.Semaphore(slots)
        self._lock = threading.Lock()
        self._waiting = {}

    def try_reserve(self):
        """Take a slot if one is free now (a conductor's claim loop, before
        it claims a job); True if taken."""
        return self._slots.acquire(blocking=False)

    def release_reserved(self):
        """Give back a slot :meth:`try_reserve` took (the claim failed)."""
        self._slots.release()

    @contextlib.contextmanager
    def job(self, key):
        """Hold a slot while running job ``key``."""
        self._slots.acquire()
        try:
            yield
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def waiting(self, key):
        """Give the slot of job ``key`` up while blocked on something else."""
        with self._lock:
            count = self._waiting.get(key, 0)
            self._waiting[key] = count + 1
        if count == 0:
            self._slots.release()
        try:
            yield
        finally:
            with self._lock:
                self._waiting[key] -= 1
                last = self._waiting[key] == 0
                if last:
                    del self._waiting[key]
            if last:
                self._slots.acquire()
