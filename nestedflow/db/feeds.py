"""Reads of a whole stack tree at once, and of what it recorded since a
point: what the dashboard (:mod:`nestedflow.dashboard`) shows and what its
live views send once a notification says the tree changed.

A tree is a root stack and every stack whose ``root_id`` is the root's id
(the root has its own id there; a root stored without one still counts).
Event and check-result ids are one sequence per table across every stack,
so one high-water mark per tree says what a viewer has seen.

Every read is one statement on :meth:`nestedflow.db.api.Database.connect`:
on SQLite it takes no write lock, so a dashboard never waits for, nor
holds up, the traversals writing the same file.
"""

import sqlalchemy as sa

from nestedflow.db import core_reads, models

_stacks = models.Stack.__table__
_events = models.Event.__table__
_checks = models.CheckResult.__table__


def _tree(root_id):
    return sa.select(_stacks.c.id).where(
        sa.or_(_stacks.c.root_id == root_id, _stacks.c.id == root_id))


def _rows(db, query):
    with db.connect() as conn:
        return list(conn.execute(query))


def live_stacks(db, show_nested=False, project_id=None, scoped=False, show_deleted=False):
    """As :meth:`nestedflow.db.api.Database.list_stacks`, without a transaction."""
    return [models.StackRow.from_mapping(row._mapping) for row in _rows(
        db, core_reads.live_stacks(show_nested, project_id, scoped, show_deleted))]


def tree_stacks(db, root_id):
    """The tree's stacks not deleted (the root even if deleted), oldest first."""
    query = (sa.select(_stacks)
             .where(sa.or_(_stacks.c.root_id == root_id, _stacks.c.id == root_id))
             .where(sa.or_(_stacks.c.deleted_at.is_(None), _stacks.c.id == root_id))
             .order_by(_stacks.c.created_at))
    return [models.StackRow.from_mapping(row._mapping) for row in _rows(db, query)]


def root_of(db, stack_id):
    """The id of the root of ``stack_id``'s tree (None: no such stack)."""
    found = _rows(db, sa.select(_stacks.c.id, _stacks.c.root_id)
                  .where(_stacks.c.id == stack_id))
    if not found:
        return None
    return found[0].root_id or found[0].id


def last_ids(db, root_id):
    """(highest event id, highest check-result id) of the tree, 0 for none."""
    event = _rows(db, sa.select(sa.func.max(_events.c.id))
                  .where(_events.c.stack_id.in_(_tree(root_id))))[0][0]
    check = _rows(db, sa.select(sa.func.max(_checks.c.id))
                  .where(_checks.c.stack_id.in_(_tree(root_id))))[0][0]
    return event or 0, check or 0


def events_after(db, root_id, after_id):
    """The tree's events with an id above ``after_id``, by id."""
    return _rows(db, sa.select(_events)
                 .where(_events.c.stack_id.in_(_tree(root_id)), _events.c.id > after_id)
                 .order_by(_events.c.id))


def checks_after(db, root_id, after_id):
    """The tree's check results with an id above ``after_id``, by id."""
    return _rows(db, sa.select(_checks)
                 .where(_checks.c.stack_id.in_(_tree(root_id)), _checks.c.id > after_id)
                 .order_by(_checks.c.id))


def conductors(db, root_id):
    """{(stack id, resource name, action): engine id} of the last event of
    each resource action that names who ran it."""
    rows = _rows(db, sa.select(_events.c.stack_id, _events.c.resource_name, _events.c.action,
                               _events.c.engine_id)
                 .where(_events.c.stack_id.in_(_tree(root_id)),
                        _events.c.engine_id.is_not(None),
                        _events.c.resource_name.is_not(None))
                 .order_by(_events.c.id))
    return {(row.stack_id, row.resource_name, row.action): row.engine_id for row in rows}


def traversal_times(db, stack):
    """(first, last) timestamps of the stack-level events of ``stack``'s
    current traversal: when it started and when it last changed state."""
    found = _rows(db, sa.select(sa.func.min(_events.c.timestamp),
                                sa.func.max(_events.c.timestamp))
                  .where(_events.c.stack_id == stack.id,
                         _events.c.traversal_id == stack.current_traversal,
                         _events.c.resource_name.is_(None)))
    first, last = found[0] if found else (None, None)
    return first or stack.created_at, last
