"""The event log: every state a stack or a resource went through."""

import sqlalchemy as sa

from nestedflow.db import fencing, models

#: What a resource write's event records (``e_<column>`` parameters).
EVENT_COLUMNS = ("stack_id", "resource_name", "resource_id", "physical_id", "action",
                  "status", "status_reason", "traversal_id", "engine_id", "timestamp")


class EventStore:
    """The events part of :class:`nestedflow.db.api.Database`."""

    def _build_event_statements(self):
        #: Event timestamps: the database's clock where it has one (fencing.db_now).
        self._now = fencing.db_now(self.dialect)
        self._event_insert_from_params = sa.insert(models.Event.__table__).values(
            {name: self._event_value(f"e_{name}", name) for name in EVENT_COLUMNS})

    def _event_value(self, param, name):
        """What an event insert writes into column ``name``: parameter
        ``param``, but the database's own time for the timestamp."""
        if name == "timestamp" and self._now is not None:
            return self._now
        return sa.bindparam(param, type_=models.Event.__table__.c[name].type)

    def on_resource_events(self, callback):
        """Call ``callback(resource_row, events)`` after a resource write
        recorded ``events`` (dicts of the event columns), in the writer's
        thread once the write succeeded."""
        self._event_listeners.append(callback)

    def _events_written(self, row, events):
        for callback in self._event_listeners:
            callback(row, events)

    def add_run_event(self, stack_id, traversal_id, owner, resource_name, action, status,
                      reason, **values):
        """An event a run writes on its own stack outside a resource write
        (a nested stack's wait ending): in one transaction with a locking
        read of the stack's ownership (fencing.locked_ownership, held until
        the commit), as every other write of a run is fenced. Raises
        Fenced, writing nothing, once ``traversal_id`` is not
        the stack's current traversal or ``owner`` (if given) not its run."""
        event = {"stack_id": stack_id, "resource_name": resource_name, "resource_id": None,
                 "physical_id": None, "action": action, "status": status,
                 "status_reason": reason, "traversal_id": traversal_id, "engine_id": None,
                 "timestamp": models.utcnow(), **values}
        # Two statements: the plain engine's transaction, not the one-statement
        # engine's autocommit (on PostgreSQL that committed the locking read
        # on its own, and a claim could commit between it and the insert).
        with self._engine.begin() as conn:
            fencing.check_run(conn, (stack_id, traversal_id, owner))
            conn.execute(self._event_insert_from_params,
                         {f"e_{key}": value for key, value in event.items()})

    def add_event(self, stack_id, resource_name, action, status, reason, **values):
        """An event a user's request records (a signal): not a run's write,
        so not fenced -- a run's go through :meth:`add_run_event`."""
        with self.writer() as session:
            session.add(models.Event(stack_id=stack_id, resource_name=resource_name,
                                     action=action, status=status, status_reason=reason,
                                     **values))

    def list_events(self, stack_id):
        with self.reader() as session:
            return list(
                session.scalars(
                    sa.select(models.Event)
                    .where(models.Event.stack_id == stack_id)
                    .order_by(models.Event.id)
                )
            )
