"""Database calls held while the claims they act under are in doubt.

A conductor's claims live in its ZooKeeper session, and the server ends
that session ``session_timeout`` after it last heard from the conductor --
which the conductor learns only when it reaches the server again. Cut off
from ZooKeeper but not from the database, its runs would go on writing
until then, after another conductor could have claimed their jobs: the
database's owner tokens refuse such a write only once the other conductor
has taken the traversal over, not in the gap before.

So from the moment kazoo reports the connection SUSPENDED, every call of
the process's :class:`nestedflow.db.api.Database` waits at this gate:
until the connection is back with the same session (the claims held all
along: the calls go on), or until the session is known lost. Then the
conductor suspends the runs of the lost session and fences each off in
the database (:meth:`nestedflow.db.stacks.StackStore.fence_run`) before
the held calls raise :class:`nestedflow.exceptions.OwnershipLost`: so
whatever those runs still try -- recording the error as a resource
failure, reverting -- is refused as any fenced run's write is, rather
than failing or rolling back a stack whose job another run resumes.
"""

import contextlib
import threading

from nestedflow import exceptions

OPEN, SUSPENDED, LOST = "open", "suspended", "lost"


class SessionGate:
    """Open, suspended or lost; :meth:`wait` passes only when open."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._state = OPEN
        #: Bumped when a lost session's waiters are let go, to fail them.
        self._generation = 0
        self._local = threading.local()

    @property
    def state(self):
        return self._state

    def suspend(self):
        """The connection dropped: the session may be expiring."""
        with self._lock:
            if self._state == OPEN:
                self._state = SUSPENDED
                self._open.clear()

    def resume(self):
        """The connection is back with the same session."""
        with self._lock:
            if self._state == SUSPENDED:
                self._state = OPEN
                self._open.set()

    def lose(self):
        """The session expired: hold every call until :meth:`renew`."""
        with self._lock:
            self._state = LOST
            self._open.clear()

    def renew(self):
        """The lost session's runs are suspended: fail the calls they were
        waiting in, and let the new session's calls through."""
        with self._lock:
            if self._state != OPEN:
                self._generation += 1
                self._state = OPEN
                self._open.set()

    @contextlib.contextmanager
    def passing(self):
        """This thread's calls pass while closed: the conductor's own,
        fencing off the runs of a lost session before it lets them go."""
        self._local.passing = True
        try:
            yield
        finally:
            self._local.passing = False

    def wait(self):
        if self._open.is_set() or getattr(self._local, "passing", False):
            return
        generation = self._generation
        self._open.wait()
        if self._generation != generation:
            raise exceptions.OwnershipLost(
                "the ZooKeeper session this process's claims lived in expired")
