"""The owner tokens written into ``stacks.traversal_owner`` (and, by a run,
into the resource locks it holds): who runs a traversal, or holds a row.

Every token is built and read through :class:`OwnerToken`, here beside the
heartbeats that find a dead engine's runs by its format, so that every
layer naming runs (conductor, engine, the in-process dispatcher) shares one
definition. The formats, stored as plain strings in existing databases and
therefore fixed:

==============================  ===============================================
``<engine id>@<32 hex>``        a run of an embedded engine (:meth:`run`)
``<engine id>@queued``          a traversal it stored and will run (:meth:`queued`)
``<engine id>@unposted``        one a jobboard engine stored and posts as a job:
                                the outbox mark (:meth:`unposted`)
``<engine id>.lost@unposted``   an outbox mark handed to an engine that never
                                beats, for any live one to post (:meth:`orphaned`)
``<conductor>:<16 hex>``        a conductor's run of a claimed job (:meth:`conductor`)
``<token>~lapsed``              a conductor's run fenced off when its ZooKeeper
                                session was lost (:meth:`lapsed`)
``<32 hex>``                    a run with no engine to name (:meth:`anonymous`)
==============================  ===============================================

A resource lock (``resources.engine_id``) is held by
``<traversal id>/<run token>`` (:meth:`lock_holder`; :attr:`holder_parts`
reads it back), or, outside any run, by ``<purpose>/<32 hex>``, e.g.
``mark-unhealthy/...`` (:meth:`holder`). A plugin's fencing token
``<traversal id>/`` stands for whichever run of the traversal holds the
lock (:meth:`any_run_of`).

:mod:`nestedflow.engine.recovery` tells how the engine's marks are used.
"""

import uuid

#: Between an engine's id and its run's part: not a character of a
#: conductor's name, so the two never mix.
SEPARATOR = "@"
#: Between a conductor's name and its run's random part.
CONDUCTOR_SEPARATOR = ":"
#: Between a resource lock holder's traversal (or a one-off holder's
#: purpose) and its run; no run's own token holds it.
HOLDER_SEPARATOR = "/"
#: The run part of a traversal stored but not yet claimed by a run.
QUEUED = "queued"
#: The run part of a traversal a jobboard engine stored and is posting:
#: the outbox mark, written in the transaction that stores the traversal.
UNPOSTED = "unposted"
#: Appended to a run's token to fence the run off: a token no run holds.
LAPSED = "~lapsed"


class OwnerToken(str):
    """An owner token: a ``str`` (it is stored and compared as the plain
    string it always was) with constructors for every format and the
    questions asked of one. Any stored string can be wrapped to be read:
    ``OwnerToken(stack.traversal_owner or "").engine_id``."""

    __slots__ = ()

    @classmethod
    def run(cls, engine_id):
        """A new token for a run of embedded engine ``engine_id``."""
        return cls(f"{engine_id}{SEPARATOR}{uuid.uuid4().hex}")

    @classmethod
    def queued(cls, engine_id):
        """The mark of a traversal ``engine_id`` stored and will run."""
        return cls(f"{engine_id}{SEPARATOR}{QUEUED}")

    @classmethod
    def unposted(cls, engine_id):
        """The mark of a traversal ``engine_id`` stored and posts as a job."""
        return cls(f"{engine_id}{SEPARATOR}{UNPOSTED}")

    @classmethod
    def orphaned(cls, engine_id):
        """The outbox mark ``engine_id`` hands a traversal it cannot post
        over to: its engine never beats, so any live engine takes it over
        and posts the job (:meth:`Database.unposted_stacks`)."""
        return cls.unposted(f"{engine_id}.lost")

    @classmethod
    def conductor(cls, name):
        """A new token for a run of conductor ``name``: 16 hex digits keep
        the token, lapsed or not, within the 64-character column."""
        return cls(f"{name}{CONDUCTOR_SEPARATOR}{uuid.uuid4().hex[:16]}")

    @classmethod
    def lapsed(cls, token):
        """The token that fences run ``token`` off (no run holds it)."""
        return cls(f"{token}{LAPSED}")

    @classmethod
    def lock_holder(cls, traversal_id, run):
        """What run ``run`` of traversal ``traversal_id`` holds a resource
        lock as: the traversal first, so that a later traversal's run never
        mistakes an older one's lock for its own."""
        return cls(f"{traversal_id}{HOLDER_SEPARATOR}{run}")

    @classmethod
    def holder(cls, purpose):
        """A new lock holder for a one-off action outside any run: no run's
        token, so no conductor or engine claims it as alive."""
        return cls.lock_holder(purpose, uuid.uuid4().hex)

    @classmethod
    def any_run_of(cls, traversal_id):
        """A fencing token any run of ``traversal_id`` holding the lock passes."""
        return cls(f"{traversal_id}{HOLDER_SEPARATOR}")

    @property
    def holder_parts(self):
        """(traversal id or purpose, run token) of a resource lock holder;
        ("", "") for no holder."""
        traversal, _, run = self.partition(HOLDER_SEPARATOR)
        return traversal, OwnerToken(run)

    @property
    def is_any_run(self):
        """Is this an :meth:`any_run_of` token?"""
        return self.endswith(HOLDER_SEPARATOR)

    @classmethod
    def anonymous(cls):
        """A new token for a run with no engine or conductor to name."""
        return cls(uuid.uuid4().hex)

    @property
    def engine_id(self):
        """The embedded engine this run or mark belongs to; None if not
        one (a conductor's run: its names cannot hold the separator)."""
        engine_id, sep, _ = self.rpartition(SEPARATOR)
        return engine_id if sep else None

    @property
    def is_queued(self):
        return self.engine_id is not None and self.endswith(SEPARATOR + QUEUED)

    @property
    def is_unposted(self):
        return self.engine_id is not None and self.endswith(SEPARATOR + UNPOSTED)

    @property
    def is_lapsed(self):
        return self.endswith(LAPSED)

    @property
    def is_conductor_run(self):
        """Might a conductor's run hold this token (alive while its run
        node is)? A lapsed token is one, whose node is gone; a lock
        holder's or an engine's is not, whatever its engine id holds
        (conductor names cannot hold the engine separator)."""
        return (CONDUCTOR_SEPARATOR in self and HOLDER_SEPARATOR not in self
                and SEPARATOR not in self)

    @classmethod
    def like_engine_runs(cls):
        """SQL ``LIKE`` pattern of every embedded engine's token."""
        return f"%{SEPARATOR}%"

    @classmethod
    def like_unposted(cls):
        """SQL ``LIKE`` pattern of every outbox mark."""
        return f"%{SEPARATOR}{UNPOSTED}"

