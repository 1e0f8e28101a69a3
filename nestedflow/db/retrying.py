"""A statement the server dropped the connection under is tried again.

When a PostgreSQL or MariaDB server restarts, fails over, or terminates
sessions (``pg_terminate_backend``), every pooled connection dies; the
first statement on each fails with a disconnect and SQLAlchemy replaces
the pool. Without a retry that statement's resource action -- and so the
whole stack -- failed. The server rolls back whatever a dropped session
had not committed, so running the call again from the start is safe;
oslo.db's ``wrap_db_retry`` does that for disconnects only, a few times,
backing off.

A call whose COMMIT reached the server just before the connection dropped
is the one case a retry sees twice: its compare-and-swap then finds its
own write and reports the row as taken (the run stops as if fenced, and
is resumed from its journal) -- never a write applied twice.
"""

import functools
import inspect

from oslo_db import api as oslo_db_api
from sqlalchemy import exc as sa_exc

#: Attempts after the first, and the first pause (doubling up to the max):
#: about 35 s of retries, so that a database restarted, or cut off from a
#: conductor for longer than its ZooKeeper session, is waited for by the
#: runs in flight rather than failing their resources -- which would roll
#: their stacks back (tests/functional/test_partitions.py). A run that
#: lost its claim meanwhile is fenced when its write finally goes through.
MAX_RETRIES = 20
RETRY_INTERVAL = 0.2
MAX_RETRY_INTERVAL = 2.0


#: PostgreSQL's SQLSTATEs of a server shutting down or starting up.
_SERVER_GOING = {"57P01", "57P02", "57P03"}


def _cannot_connect(error):
    """A connection psycopg2 could not make or keep that oslo.db's filters
    leave untranslated ("the database system is shutting down" while the
    server stops): the same disconnect. Not a lock or statement timeout,
    which have SQLSTATEs of their own."""
    for _ in range(3):  # TaskFlow's storage wraps it in StorageFailure
        orig = getattr(error, "orig", None)
        if (isinstance(error, sa_exc.OperationalError) and hasattr(orig, "pgcode")
                and (orig.pgcode is None or orig.pgcode in _SERVER_GOING)):
            return True
        error = error and error.__cause__
    return False


def on_disconnect(method):
    """``method`` retried when its connection was dropped."""
    wrapped = oslo_db_api.wrap_db_retry(
        max_retries=MAX_RETRIES, retry_interval=RETRY_INTERVAL,
        max_retry_interval=MAX_RETRY_INTERVAL, inc_retry_interval=True,
        retry_on_disconnect=True, exception_checker=_cannot_connect)(method)
    return functools.wraps(method)(wrapped)


def retry_methods(cls, names):
    """Wrap each of ``names`` of ``cls`` (defined on it or inherited) with
    :func:`on_disconnect`; returns ``cls``."""
    for name in names:
        setattr(cls, name, on_disconnect(getattr(cls, name)))
    return cls


def gated(method):
    """``method`` waits first at its object's ``gate``
    (:class:`nestedflow.db.session_gate.SessionGate`), if it has one."""

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        gate = self.gate
        if gate is not None:
            gate.wait()
        return method(self, *args, **kwargs)
    call.guarded = True
    return call


def guard_public_methods(cls, exempt):
    """Every public method of ``cls`` (its own and inherited ones) but the
    names in ``exempt`` and those already guarded retried on a dropped
    connection (:func:`on_disconnect`) and held at the object's gate
    (:func:`gated`); returns ``cls``."""
    for name in dir(cls):
        if name.startswith("_") or name in exempt:
            continue
        method = inspect.getattr_static(cls, name)
        if inspect.isfunction(method) and not getattr(method, "guarded", False):
            setattr(cls, name, gated(on_disconnect(method)))
    return cls


class Guarded:
    """Every public method of a subclass (its own and inherited) is retried
    on a dropped connection and held at its object's ``gate``, but for the
    names in its ``UNGUARDED``: the rule, not a list of what callers happen
    to use -- a list once left out the listing of a deleted stack's
    children, and a nested stack's delete failed on a dropped connection."""

    #: Methods that cannot be run again, each with its reason where set.
    UNGUARDED = frozenset()
    #: Where every call waits first; None: nowhere.
    gate = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        guard_public_methods(cls, cls.UNGUARDED)


class GuardedStore(Guarded):
    """A store of rows of its own over a :class:`nestedflow.db.api.Database`
    (``db``), guarded as the database is and held at the database's gate."""

    def __init__(self, db):
        self._db = db

    @property
    def gate(self):
        return self._db.gate
