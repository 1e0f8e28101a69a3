"""Fencing that holds at commit, and server-side bounds on every session.

A run's writes are compare-and-swap statements whose ``WHERE`` clause
carries what the run believes. Checked when a statement runs, that is not
enough for a transaction of several statements: a conductor paused
(SIGSTOP, a frozen VM) between its first statement and its ``COMMIT``
keeps the transaction open, and when it wakes its writes land after
another run took the traversal over. So each ownership check of a
transaction *locks* the stack row it reads (``FOR SHARE``): the claim that
hands the traversal to another run updates that row and therefore waits
until the transaction has ended -- the check holds until the commit.

A paused transaction must not make that claim (or anything else) wait for
the length of the pause: every connection nestedflow opens carries
server-side limits (:func:`apply_session_limits`) -- a transaction left
idle is ended by the server, its locks released and nothing of it
committed, and no statement waits for a row lock for ever. Both are
shorter than the ZooKeeper session timeout, so by the time another
conductor claims a paused conductor's job the paused transaction is gone.

Event timestamps are the database's own clock (:func:`db_now`): a late
write cannot carry a time from before a pause, and every process's events
sort on one clock.
"""

import math

import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import models
from nestedflow.db.owners import OwnerToken

#: Share of ``[conductor] zookeeper_session_timeout`` the automatic limits take.
IDLE_SHARE = 0.4
LOCK_SHARE = 0.8

_STACK = models.Stack.__table__


def session_limits(conf):
    """(idle transaction timeout, lock wait timeout) in seconds, 0 = none.

    Unset options follow the ZooKeeper session timeout (see ``[database]
    idle_transaction_timeout``), so the bounds stay below it when only the
    session timeout is changed.
    """
    session = conf.conductor.zookeeper_session_timeout
    idle = conf.database.idle_transaction_timeout
    lock = conf.database.lock_wait_timeout
    return (IDLE_SHARE * session if idle is None else idle,
            LOCK_SHARE * session if lock is None else lock)


def session_statements(dialect_name, idle, lock):
    """The statements that set the limits on a new connection."""
    if dialect_name == "postgresql":
        return [f"SET idle_in_transaction_session_timeout = {int(idle * 1000)}",
                f"SET lock_timeout = {int(lock * 1000)}"]
    if dialect_name in ("mysql", "mariadb"):
        # Whole seconds; rounded up so a limit never becomes "none".
        statements = []
        if idle:
            statements.append(f"SET SESSION idle_transaction_timeout = {math.ceil(idle)}")
        if lock:
            statements.append(f"SET SESSION innodb_lock_wait_timeout = {math.ceil(lock)}")
        return statements
    # SQLite has no server; its busy timeout bounds a wait for its lock.
    return []


def apply_session_limits(engine, idle, lock):
    """Set the limits on every connection ``engine`` opens."""
    statements = session_statements(engine.dialect.name, idle, lock)
    if not statements:
        return

    @sa.event.listens_for(engine, "connect")
    def _limit(dbapi_connection, record):
        cursor = dbapi_connection.cursor()
        try:
            for statement in statements:
                cursor.execute(statement)
        finally:
            cursor.close()
        # psycopg2 and PyMySQL opened a transaction for the SETs: end it,
        # or the new connection would itself count as idle in one.
        dbapi_connection.commit()


def db_now(dialect_name):
    """The database's current UTC time as a naive timestamp (the models'
    convention), or None where the client's clock is used (SQLite: one
    host, and its ``now`` has millisecond precision only)."""
    if dialect_name == "postgresql":
        # clock_timestamp(), not now(): the time of the statement, not of
        # the transaction's start.
        return sa.literal_column("(clock_timestamp() AT TIME ZONE 'UTC')",
                                 type_=models.Timestamp)
    if dialect_name in ("mysql", "mariadb"):
        return sa.literal_column("UTC_TIMESTAMP(6)", type_=models.Timestamp)
    return None


def owns_stack(*conditions):
    """``EXISTS`` a stack row matching ``conditions``, locked ``FOR SHARE``
    until the transaction ends (a no-op on SQLite, whose writers hold the
    whole database)."""
    return sa.exists(sa.select(sa.literal(1)).where(*conditions).with_for_update(read=True)
                     .correlate_except(_STACK))


def not_taken_over(stack_id=None):
    """The holder's run has not been replaced: the stack's current
    traversal is another one (superseded -- an action in flight keeps its
    result, the lock's compare-and-swap fences the rest), or it is the
    holder's (``w_traversal``) and still claimed by the holder's run
    (``w_owner``). ``stack_id``: the stack, as a column of the enclosing
    statement (default: parameter ``w_stack``)."""
    if stack_id is None:
        stack_id = sa.bindparam("w_stack")
    return owns_stack(
        _STACK.c.id == stack_id,
        sa.or_(_STACK.c.current_traversal != sa.bindparam("w_traversal"),
               _STACK.c.traversal_owner == sa.bindparam("w_owner")))


def holder_params(stack_id, holder):
    """The :func:`not_taken_over` parameters of a lock ``holder``
    (``traversal/owner``, as :class:`flows.tasks.TraversalScope` makes it)."""
    traversal, owner = OwnerToken(holder or "").holder_parts
    return {"w_stack": stack_id, "w_traversal": traversal, "w_owner": owner}


def check_run(conn, fence):
    """Raise Fenced unless the run ``fence`` names --
    (stack id, traversal id, owner or None for any) -- still owns the
    stack: a locking read (:func:`locked_ownership`), so the first statement
    of the transaction whose writes it fences, until the commit. None: no
    fence (a user's request, not a run's)."""
    if fence is None:
        return
    stack_id, traversal_id, owner = fence
    found = locked_ownership(conn, stack_id)
    if found is None or found[0] != traversal_id or (owner and found[1] != owner):
        # Not TraversalSuperseded: that one is the fenced statement's own
        # stack moving on, which callers retry.
        raise exceptions.Fenced(f"run {owner} of traversal {traversal_id} of stack "
                                f"{stack_id} no longer owns it")


def locked_ownership(conn, stack_id):
    """(current traversal, its owner) of the stack as of the end of
    ``conn``'s transaction, or None if there is no such stack: a locking
    read, so the first statement of a transaction it should fence."""
    found = conn.execute(_LOCKED_OWNERSHIP, {"stack_id": stack_id}).first()
    return None if found is None else tuple(found)


# Built once (every journal flush runs it): a statement made per call cost
# its cache key and the matching of its result columns to the cached
# compilation's, a tenth of a small traversal's journal writes.
_LOCKED_OWNERSHIP = (sa.select(_STACK.c.current_traversal, _STACK.c.traversal_owner)
                     .where(_STACK.c.id == sa.bindparam("stack_id"))
                     .with_for_update(read=True))
