"""PostgreSQL: a few connections kept out of the pool between the writes
of resource tasks.

A real resource's task writes three times (its lock with its start, its
physical object, its end), each in a transaction of its own -- one
statement each, the last two autocommitted
(:meth:`nestedflow.db.api.Database.transaction`). Checking a connection out
of SQLAlchemy's pool for each, switching it to autocommit and back, and
checking it in again cost as much CPU as the statement itself
(doc/source/performance.rst, "Kept connections on PostgreSQL").
:class:`KeptConnections` keeps up to ``size`` connections of one engine
checked out and hands them from one write to the next; a write that finds
none kept checks one out as before.

What stays as it was:

- Every write is a transaction of its own, ``conn.begin()`` to its commit
  or rollback, before its connection is kept again: a kept connection has
  no transaction open and holds no lock. A process killed or paused in
  the middle of one leaves it to the server, as before.
- A connection unused for ``idle_after`` seconds goes back to the pool
  rather than to a write, so the pool's ping of an idle connection
  (:func:`nestedflow.db.drivers.ping_idle_connections`) still comes first.
- A write that fails for any reason but a compare-and-swap that found its
  row changed (which writes nothing) closes its connection, and every kept
  connection with it: after a lost server, none of them is handed out
  again, and the pool's own invalidation deals with them as they come back.
- At most ``size`` connections are kept, whatever the number of threads:
  the pool keeps the rest.
"""

import time

from nestedflow.db import group_commit


class KeptConnections:
    """Up to ``size`` connections of ``engine`` (SQLAlchemy's) kept between
    short transactions (see the module docstring)."""

    def __init__(self, engine, size, idle_after):
        self._engine = engine
        self._size = size
        self._idle_after = idle_after
        # (connection, monotonic time it was given back); list.append and
        # list.pop are atomic, so threads need no lock of their own.
        self._kept = []

    def run(self, work):
        """``work(conn)`` in a transaction of its own on a kept connection;
        its result, once committed (or its exception)."""
        conn = self._take()
        try:
            with conn.begin():
                result = work(conn)
        except group_commit.NOTHING_WRITTEN:
            self._give_back(conn)
            raise
        except BaseException:
            conn.close()
            self.clear()
            raise
        self._give_back(conn)
        return result

    def clear(self):
        """Give every kept connection back to the pool."""
        while True:
            try:
                conn, _ = self._kept.pop()
            except IndexError:
                return
            conn.close()

    def _take(self):
        while True:
            try:
                conn, since = self._kept.pop()
            except IndexError:
                return self._engine.connect()
            if conn.invalidated or (self._idle_after
                                    and time.monotonic() - since >= self._idle_after):
                conn.close()
                continue
            return conn

    def _give_back(self, conn):
        if len(self._kept) < self._size:
            self._kept.append((conn, time.monotonic()))
        else:
            conn.close()
