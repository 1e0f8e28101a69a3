"""SQLite: the small write transactions of many threads committed together.

An SQLite file has one writer at a time, and every commit of a WAL
database waits for ``fdatasync`` (about 0.14 ms on the benchmark machine)
while it holds the writer's lock. A resource whose type acts outside the
database commits three times (its start, its object, its end), so a flat
stack of such resources queued its workers behind one commit after
another: the writer's lock, not the CPU, set the pace
(doc/source/performance.rst, "Group commit on SQLite").

:class:`GroupCommit` is the classic group commit. A thread hands its
transaction's work to it and waits; whichever waiting thread finds no
transaction in progress becomes the leader and runs every work queued by
then, in order, in one transaction, then commits once. Each caller returns
(or raises) only after the commit that made its writes durable, as it
would after its own; no write is made less durable.

A work item is ``work(conn)``: statements on ``conn`` and nothing else
(it may run in another thread), and one that may run again after a
rollback. It may fail only with an exception in :data:`NOTHING_WRITTEN`
-- a compare-and-swap that found the row changed, which writes nothing
-- without harming the others; any other error of a work item rolls the
whole transaction back and every work item of it runs again alone, in a
transaction of its own, so that one's failure is never another's. A
transaction that fails by itself (SQLite's lock still busy at the end of
its timeout, a failed commit) fails every work item in it, as each one's
own transaction would have.
"""

import threading

from nestedflow import exceptions

#: Failures of a work item that leave nothing written: the transaction
#: goes on with the other work items.
NOTHING_WRITTEN = (exceptions.ResourceLocked,)


class _WorkFailed(Exception):
    """A work item failed: the others are run again, each alone."""


class _Work:
    __slots__ = ("work", "done", "result", "error")

    def __init__(self, work):
        self.work = work
        self.done = False
        self.result = None
        self.error = None

    def outcome(self):
        if self.error is not None:
            raise self.error
        return self.result


class GroupCommit:
    """Transactions of ``engine`` (SQLAlchemy's, on SQLite) from many
    threads, committed together (see the module docstring)."""

    def __init__(self, engine):
        self._engine = engine
        self._cond = threading.Condition(threading.Lock())
        self._queue = []
        self._leading = False

    def run(self, work):
        """``work(conn)`` in a transaction, maybe shared; its result once
        committed (or its exception)."""
        item = _Work(work)
        with self._cond:
            self._queue.append(item)
            while self._leading and not item.done:
                self._cond.wait()
            if item.done:
                return item.outcome()
            self._leading = True
            batch, self._queue = self._queue, []
        try:
            self._commit(batch)
        finally:
            with self._cond:
                self._leading = False
                self._cond.notify_all()
        return item.outcome()

    def _commit(self, batch):
        try:
            self._together(batch)
        except _WorkFailed:
            for item in batch:
                self._alone(item)
            return
        except BaseException as error:
            # The transaction itself failed (SQLite's lock busy past its
            # timeout, the commit): as each one's own would have. Not run
            # again one by one: each would wait out the same timeout.
            for item in batch:
                item.error, item.done = error, True
            return
        for item in batch:
            item.done = True

    def _together(self, batch):
        with self._engine.begin() as conn:
            for item in batch:
                try:
                    item.result = item.work(conn)
                except NOTHING_WRITTEN as error:
                    item.error = error
                except Exception as error:
                    if len(batch) == 1:
                        raise
                    raise _WorkFailed() from error

    def _alone(self, item):
        item.result = item.error = None
        try:
            with self._engine.begin() as conn:
                item.result = item.work(conn)
        except BaseException as error:
            item.error = error
        finally:
            item.done = True
