"""Heartbeats of embedded engines, and the stacks their dead runs left.

An embedded engine (no jobboard) runs traversals in its own threads; if the
process is killed, nothing else knows its runs ended. It therefore beats
(:class:`HeartbeatStore.beat`), names its runs after itself, and any
engine finds the stacks whose run belongs to an engine that stopped
beating (:meth:`HeartbeatStore.orphaned_stacks`). Times are the
database's clock, so engines on hosts with skewed clocks agree.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql as mysql_dialect
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect

from nestedflow import states
from nestedflow.db import fencing, models

# The token format (re-exported: the jobboard dispatcher reads it here).
from nestedflow.db.owners import SEPARATOR, OwnerToken

#: Missed beats after which an engine counts as dead.
MISSED_BEATS = 3


class HeartbeatStore:
    """The heartbeat part of :class:`nestedflow.db.api.Database`."""

    def _clock(self):
        """Now, by the database's clock where it has one."""
        now = fencing.db_now(self.dialect)
        return now if now is not None else sa.literal(models.utcnow(), type_=models.Timestamp)

    def beat(self, engine_id, host, pid, interval, binary=None):
        """Record that ``engine_id`` (running in program ``binary``) is alive now.

        One upsert statement: on InnoDB, an UPDATE that matches no row
        takes a gap lock, and two engines starting together that both
        follow it with their INSERT deadlock on each other's gap (seen
        with three conductors starting at once on MariaDB).
        """
        table = models.EngineHeartbeat.__table__
        now = self._clock()
        values = dict(id=engine_id, host=host, pid=pid, report_interval=interval,
                      binary=binary, created_at=now, updated_at=now)
        changed = dict(updated_at=now, report_interval=interval)
        if self.dialect in ("mysql", "mariadb"):
            statement = mysql_dialect.insert(table).values(**values).on_duplicate_key_update(
                **changed)
        else:
            insert = (postgresql_dialect.insert if self.dialect == "postgresql"
                      else sqlite_dialect.insert)
            statement = insert(table).values(**values).on_conflict_do_update(
                index_elements=[table.c.id], set_=changed)
        with self._engine.begin() as conn:
            conn.execute(statement)

    def forget_engine(self, engine_id):
        """A clean shutdown: the engine's runs have ended."""
        table = models.EngineHeartbeat.__table__
        with self._engine.begin() as conn:
            conn.execute(sa.delete(table).where(table.c.id == engine_id))

    def _is_dead(self, table):
        """SQL: the engine of heartbeat row ``table`` missed its beats."""
        return self._older_than(table.c.updated_at, table.c.report_interval * MISSED_BEATS)

    def _older_than(self, column, seconds):
        """SQL: ``column`` is more than ``seconds`` (an expression) ago."""
        if self.dialect == "postgresql":
            return column < self._clock() - sa.func.make_interval(0, 0, 0, 0, 0, 0, seconds)
        if self.dialect in ("mysql", "mariadb"):
            return column < sa.func.timestampadd(
                sa.text("MICROSECOND"), sa.cast(-seconds * 1000000, sa.Integer), self._clock())
        return (sa.func.julianday(column)
                < sa.func.julianday(self._clock()) - seconds / 86400.0)

    def engine_alive(self, engine_id):
        """False once ``engine_id`` stopped beating (or never beat here, or
        shut down): its runs are over; True while it beats."""
        table = models.EngineHeartbeat.__table__
        with self._single.connect() as conn:
            found = conn.execute(sa.select(self._is_dead(table))
                                 .where(table.c.id == engine_id)).first()
        return found is not None and not found[0]

    def list_heartbeats(self):
        """Every engine's heartbeat row, oldest first, each with ``up``:
        whether it beat within two of its intervals -- Heat's rule for a
        service's status (heat/common/service_utils.py ``format_service``),
        on the database's clock."""
        table = models.EngineHeartbeat.__table__
        up = sa.not_(self._older_than(table.c.updated_at, table.c.report_interval * 2))
        query = sa.select(table, up.label("up")).order_by(table.c.created_at, table.c.id)
        with self._single.connect() as conn:
            return list(conn.execute(query))

    def orphaned_stacks(self):
        """(stack id, traversal, action) of every stack IN_PROGRESS whose
        run (or queued run) -- owner ``<engine id>@...`` -- belongs to an
        embedded engine that stopped beating or is gone."""
        return [row[:3] for row in self._dead_engines_stacks(
            self._owner_like(OwnerToken.like_engine_runs()),
            sa.not_(self._owner_like(OwnerToken.like_unposted())))]

    def unposted_stacks(self):
        """The same for the stacks a jobboard engine stored (owner
        ``<engine id>@unposted``, until a conductor claims the job) and
        then died: perhaps before it posted their job. Rows are (stack id,
        traversal, action, owner).

        Also those whose live engine stored them more than three of its
        beats ago and has not had them claimed: its post failed and the
        run that would have retried it is gone -- a database down under
        the post, the run taken over by a conductor that finds the child
        its predecessor stored and waits for it (tests/functional/
        test_partitions.py). :meth:`JobboardDispatcher.repost` posts them
        unless the board already holds their job.
        """
        stacks = models.Stack.__table__
        patience = models.EngineHeartbeat.__table__.c.report_interval * MISSED_BEATS
        # A live engine that took the mark over is posting it now: its
        # clock starts again then (two conductors beating together saw the
        # stored time alone and both posted the job).
        return self._dead_engines_stacks(
            self._owner_like(OwnerToken.like_unposted()),
            stale=sa.and_(
                self._older_than(sa.func.coalesce(stacks.c.updated_at, stacks.c.created_at),
                                 patience),
                sa.or_(stacks.c.outbox_taken_at.is_(None),
                       self._older_than(stacks.c.outbox_taken_at, patience))))

    def take_over_unposted(self, stack_id, traversal_id, owner, new_owner):
        """Make ``new_owner`` the one to post the traversal a dead engine
        (``owner``) stored; False if another engine or a run got it first."""
        stacks = models.Stack.__table__
        with self._engine.begin() as conn:
            return conn.execute(
                sa.update(stacks)
                .where(stacks.c.id == stack_id, stacks.c.current_traversal == traversal_id,
                       stacks.c.traversal_owner == owner)
                .values(traversal_owner=new_owner, outbox_taken_at=self._clock())).rowcount == 1

    @staticmethod
    def _owner_like(pattern):
        return models.Stack.__table__.c.traversal_owner.like(pattern)

    def _dead_engines_stacks(self, *owner_conditions, stale=sa.false()):
        stacks, beats = models.Stack.__table__, models.EngineHeartbeat.__table__
        engine_of_run = stacks.c.traversal_owner.like(beats.c.id + SEPARATOR + "%")
        query = (sa.select(stacks.c.id, stacks.c.current_traversal, stacks.c.action,
                           stacks.c.traversal_owner)
                 .outerjoin(beats, engine_of_run)
                 .where(stacks.c.status == states.IN_PROGRESS, stacks.c.deleted_at.is_(None),
                        *owner_conditions,
                        sa.or_(beats.c.id.is_(None), self._is_dead(beats), stale))
                 .order_by(stacks.c.nested_depth.desc(), stacks.c.created_at))
        with self._single.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def forget_dead_engines(self):
        """Remove the heartbeats of dead engines (a run naming an engine
        with no heartbeat is known dead just the same)."""
        beats = models.EngineHeartbeat.__table__
        with self._engine.begin() as conn:
            conn.execute(sa.delete(beats).where(self._is_dead(beats)))
