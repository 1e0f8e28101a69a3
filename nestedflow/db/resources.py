"""Resource rows: their locks and their compare-and-swap writes (with the
events that record them)."""

import sqlalchemy as sa

from nestedflow import exceptions, states
from nestedflow.db import fencing, models, precompiled
from nestedflow.db.events import EVENT_COLUMNS


class ResourceStore:
    """The resources part of :class:`nestedflow.db.api.Database`."""

    def _build_resource_statements(self):
        resources = models.Resource.__table__
        self._resource_by_id = sa.select(resources).where(
            resources.c.id == sa.bindparam("w_id"))
        self._resources_of_stack = (
            sa.select(resources).where(resources.c.stack_id == sa.bindparam("w_stack"))
            .order_by(resources.c.id))
        self._current_resources_of_stack = self._resources_of_stack.where(
            resources.c.current.is_(True))
        self._resource_insert = sa.insert(resources)
        self._holder_owns_stack = sa.select(fencing.not_taken_over())
        stacks = models.Stack.__table__
        # A wave's fence (write_free_resources): the run's ownership and
        # cancel, read FOR SHARE so that they hold until the commit.
        self._run_state = (
            sa.select(stacks.c.current_traversal, stacks.c.traversal_owner,
                      stacks.c.cancel_requested)
            .where(stacks.c.id == sa.bindparam("w_stack")).with_for_update(read=True))
        self._written_check = (
            sa.select(resources.c.id, resources.c.atomic_key, resources.c.engine_id,
                      resources.c.traversal_id)
            .where(resources.c.id.in_(sa.bindparam("w_ids", expanding=True))))

    def list_resources(self, stack_id, current_only=True):
        query = (self._current_resources_of_stack if current_only
                 else self._resources_of_stack)
        return self._resource_rows(query, stack_id)

    def _resource_rows(self, query, stack_id):
        with self._single.connect() as conn:
            return [models.ResourceRow.from_mapping(found._mapping)
                    for found in conn.execute(query, {"w_stack": stack_id})]

    def read_resource(self, resource_id):
        """The row as it is now, unlocked and detached; None if there is none."""
        with self._single.connect() as conn:
            found = conn.execute(self._resource_by_id, {"w_id": resource_id}).first()
        return None if found is None else models.ResourceRow.from_mapping(found._mapping)

    def get_resource(self, resource_id):
        with self.reader() as session:
            return session.get(models.Resource, resource_id)

    def list_all_resources(self, stack_id):
        """Every row of the stack that may still own a physical object."""
        return self._resource_rows(self._resources_of_stack, stack_id)

    def add_replacement(self, row, holder, template_id, requires, type_name, traversal_id,
                        start=None, event=None):
        """A new, not yet current, row (locked by ``holder``) to replace ``row``.

        ``start``: values to insert it with (its action's IN_PROGRESS, as
        :meth:`try_lock_resource`'s ``start``), recorded as an event by
        ``event`` in the same transaction.
        """
        values = {
            "stack_id": row.stack_id, "name": row.name, "type": type_name,
            "template_id": template_id, "action": states.INIT, "status": states.COMPLETE,
            "status_reason": "", "physical_id": None, "properties_data": None,
            "attr_data": None, "requires": sorted(requires), "needed_by": [],
            "deletion_policy": row.deletion_policy, "replaces": row.id, "replaced_by": None,
            "current": False, "engine_id": holder, "atomic_key": 0,
            "traversal_id": traversal_id, "created_at": models.utcnow(), "updated_at": None,
            **(start or {})}
        with self._engine.begin() as conn:
            # First statement: fenced (and kept so, see fencing) to the commit.
            if not conn.execute(self._holder_owns_stack,
                                fencing.holder_params(row.stack_id, holder)).scalar():
                raise exceptions.ResourceLocked(row.name, "a newer owner")
            new_id = conn.execute(self._resource_insert, values).inserted_primary_key[0]
            new = models.ResourceRow.from_mapping({**values, "id": new_id})
            events = self._event_params(new, [start], event) if start and event else ()
            if events:
                conn.execute(self._event_insert_from_params,
                             [{f"e_{name}": value for name, value in fields.items()}
                              for fields in events])
        if events and self._event_listeners:
            self._events_written(new, events)
        return new

    def swap_current(self, old, new, holder, release=False, completed=None, event=None):
        """Make ``new`` the current version of the resource instead of ``old``.

        Used both ways: a replacement taking over, and a rollback giving the
        original back. ``release``: also give back both locks.
        ``completed``: the write that records ``new``'s action done (with
        its event by ``event``), made in the same transaction.

        One transaction with compare-and-swap on both rows: either the
        replacement is current and the original waits for cleanup, or
        nothing changed.
        """
        swaps = [(old, {"current": False, "replaced_by": new.id}, None),
                 (new, {**(completed or {}), "current": True, "replaced_by": None},
                  [completed] if completed else None)]
        with self._engine.begin() as conn:
            for row, values, writes in swaps:
                if release:
                    values["engine_id"] = None
                self._cas_write(conn, row, holder, values, event if writes else None, writes)
        for row, values, _ in swaps:
            _applied(row, values)

    def set_edges(self, edges):
        """Rewrite requires/needed_by of current rows: ``{id: (requires, needed_by)}``."""
        if not edges:
            return
        table = models.Resource.__table__
        with self._engine.begin() as conn:
            conn.execute(
                sa.update(table).where(table.c.id == sa.bindparam("w_id"))
                .values(requires=sa.bindparam("v_requires"),
                        needed_by=sa.bindparam("v_needed_by")),
                [{"w_id": row_id, "v_requires": sorted(requires),
                  "v_needed_by": sorted(needed_by)}
                 for row_id, (requires, needed_by) in edges.items()])

    def lock_resource(self, resource_id, holder, may_steal=None):
        """Take the resource lock for ``holder``; returns the locked row.

        Re-entrant for the same holder. ``may_steal(row)`` decides whether a
        lock held by somebody else is stale (its run is dead or fenced).
        It may ask ZooKeeper, so it is asked before the write's transaction
        opens (no transaction waits on anything outside the database); the
        write then takes the lock only if the row is unchanged since.
        """
        row = self.read_resource(resource_id)
        if row is None:
            raise exceptions.ResourceNotFound(None, resource_id)
        if row.engine_id not in (None, holder) and not (may_steal and may_steal(row)):
            raise exceptions.ResourceLocked(row.name, row.engine_id)
        table = models.Resource.__table__
        with self._single.begin() as conn:
            result = conn.execute(
                sa.update(table)
                .where(table.c.id == resource_id, table.c.atomic_key == row.atomic_key,
                       fencing.not_taken_over())
                .values(engine_id=holder, atomic_key=row.atomic_key + 1,
                        updated_at=models.utcnow()),
                fencing.holder_params(row.stack_id, holder))
        if result.rowcount != 1:
            raise exceptions.ResourceLocked(row.name, "a concurrent writer")
        return _applied(row, {"engine_id": holder})

    def try_lock_resource(self, resource_id, holder, stack_id, traversal_id, owner=None,
                          cancelled_ok=False, start=None, event=None):
        """Take a free (or our own) resource lock in one statement, only while
        ``traversal_id`` -- run by ``owner``, if given, and not cancelled
        unless ``cancelled_ok`` -- is the stack's current traversal.

        Returns the locked row, or None when any of that does not hold: the
        caller then finds out which (:meth:`lock_resource`, ``ownership``).
        The ownership test shares the lock's statement, so no traversal can
        take over between the two.

        ``start(row)`` may return values to write (as :meth:`update_resource`
        does, with ``event``) in the lock's own transaction: an action's
        ``IN_PROGRESS`` state costs no commit of its own. It may also return
        a list of such writes, each a dict or a callable given the row as
        the writes before it left it (and returning None to stop there):
        an action that touches nothing outside this database runs, and
        records its end, in that same transaction.
        """
        stmt = self._try_lock_statement(bool(owner), cancelled_ok)
        params = {"w_id": resource_id, "w_holder": holder, "w_stack": stack_id,
                  "w_traversal": traversal_id, "w_owner": owner, "v_now": models.utcnow()}
        with self._engine.begin() as conn:
            # Precompiled (and prepared on PostgreSQL): the lock of every
            # resource a traversal does not find free as the flow read it.
            if self._engine.dialect.update_returning:
                found = precompiled.first(conn, stmt, params)
                if found is None:
                    return None
            else:
                if precompiled.execute(conn, stmt, params).rowcount != 1:
                    return None
                found = conn.execute(self._resource_by_id, {"w_id": resource_id}).first()._mapping
            # Detached, like every row handed to tasks: they only read it and
            # pass it back to the compare-and-swap writes.
            row = models.ResourceRow.from_mapping(found)
            merged, writes = _run_steps(models.ResourceRow.copy(row), start)
            if merged:
                self._cas_write(conn, row, holder, merged, event, writes)
                _applied(row, merged)
        return row

    def write_free_resource(self, row, holder, stack_id, traversal_id, owner=None,
                            cancelled_ok=False, start=None, event=None, keep_lock=False):
        """:meth:`try_lock_resource` for a caller that read ``row`` earlier
        and whose ``start`` writes end by releasing the lock -- or, with
        ``keep_lock``, leave it taken by ``holder``.

        If the row is still free and unchanged since (same atomic key) and
        ``traversal_id`` still the stack's current traversal as
        :meth:`try_lock_resource` requires, the writes land in one
        statement that takes the lock (and gives it back, unless
        ``keep_lock``). Returns the row as written, or None when nothing
        was (the caller then locks the row).
        """
        if row.engine_id is not None:
            return None
        view = models.ResourceRow.copy(row)
        merged, writes = _run_steps(view, start)
        if not merged or merged.get("engine_id", holder) != (holder if keep_lock else None):
            return None
        if keep_lock:
            merged["engine_id"] = holder
        ownership = {"w_stack": stack_id, "w_traversal": traversal_id, "w_owner": owner,
                     "free": (bool(owner), cancelled_ok)}
        # A lock kept is taken in a transaction, as try_lock_resource takes
        # it: a run paused before the commit leaves the row untouched, and
        # the server ends its transaction (db.fencing). One that is given
        # back autocommits on PostgreSQL: nothing is left locked either way.
        try:
            self.transaction(lambda conn: self._cas_write(conn, row, holder, merged, event,
                                                          writes, ownership),
                             single=not keep_lock)
        except exceptions.ResourceLocked:
            return None
        return _applied(models.ResourceRow.copy(row), merged)

    def write_free_resources(self, plans, holder, stack_id, traversal_id, owner=None,
                             cancelled_ok=False, event=None):
        """:meth:`write_free_resource` for the rows of a database-only wave
        (:mod:`nestedflow.flows.tasks.waves`): every row's writes, and
        their events, in one transaction -- all of them or none.

        ``plans``: ``(row, writes)`` pairs, ``row`` as read when the flow
        was built (free), ``writes`` the successive writes of its action,
        the last releasing the lock (``engine_id=None``), as
        :meth:`write_free_resource`'s ``start`` returns them. Returns the
        rows as written, or None when nothing was: the traversal is not
        ``traversal_id`` run by ``owner`` (or is cancelled, unless
        ``cancelled_ok``), or any row changed since it was read -- the
        caller then finds out which, row by row.
        """
        groups, events, written = {}, [], []
        now = models.utcnow()
        for row, writes in plans:
            merged = {}
            for values in writes:
                merged.update(values)
            merged["updated_at"] = now
            params = {f"v_{key}": value for key, value in merged.items()}
            params.update(w_id=row.id, w_key=row.atomic_key, v_atomic_key=row.atomic_key + 1,
                          w_stack=stack_id, w_traversal=traversal_id, w_owner=owner)
            groups.setdefault(frozenset(merged), []).append(params)
            row_events = self._event_params(row, writes, event, now) if event else []
            events.extend(row_events)
            written.append((row, merged, row_events))
        free = (bool(owner), cancelled_ok)
        try:
            # The plain engine: on PostgreSQL _single autocommits each statement.
            with self._engine.begin() as conn:
                # First: a locking read of the run's ownership, held to the
                # commit (fencing): a run taken over writes nothing at all.
                found = conn.execute(self._run_state, {"w_stack": stack_id}).first()
                if found is None or found[0] != traversal_id or (
                        owner and found[1] != owner) or (found[2] and not cancelled_ok):
                    raise _Changed()  # rolled back: nothing to commit
                for columns, rows in groups.items():
                    # Each row's compare-and-swap also checks ownership in
                    # its own statement, as every resource write does.
                    result = conn.execute(self._cas_statement(columns, free), rows)
                    if self._engine.dialect.supports_sane_multi_rowcount:
                        if result.rowcount != len(rows):
                            raise _Changed()
                    elif not self._all_written(conn, rows):
                        raise _Changed()
                if events:
                    conn.execute(self._event_insert_from_params,
                                 [{f"e_{name}": value for name, value in fields.items()}
                                  for fields in events])
        except _Changed:
            return None
        rows = []
        for row, merged, row_events in written:
            if row_events and self._event_listeners:
                self._events_written(row, row_events)
            rows.append(_applied(models.ResourceRow.copy(row), merged))
        return rows

    def _all_written(self, conn, params):
        """Did a batched executemany (whose row count the driver does not
        give) write every row? Read in the writing transaction: each row
        it wrote has the key it set, its traversal and no lock, which a
        write of another run (locking first: a key two above, or a lock)
        or of another traversal cannot leave."""
        expected = {p["w_id"]: (p["v_atomic_key"], p.get("v_traversal_id")) for p in params}
        found = conn.execute(self._written_check, {"w_ids": list(expected)}).all()
        return len(found) == len(expected) and all(
            expected[f.id][0] == f.atomic_key and f.engine_id is None and (
                expected[f.id][1] in (None, f.traversal_id)) for f in found)

    def _try_lock_statement(self, with_owner, cancelled_ok):
        key = ("try_lock", with_owner, cancelled_ok)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            res = models.Resource.__table__
            stmt = (
                sa.update(res)
                .where(res.c.id == sa.bindparam("w_id"),
                       sa.or_(res.c.engine_id.is_(None),
                              res.c.engine_id == sa.bindparam("w_holder")),
                       self._owns_clause(with_owner, cancelled_ok))
                .values(engine_id=sa.bindparam("w_holder"), atomic_key=res.c.atomic_key + 1,
                        updated_at=sa.bindparam("v_now"))
            )
            if self._engine.dialect.update_returning:
                # The locked row comes back with the lock: no second read.
                stmt = stmt.returning(*res.c)
            self._cas_statements[key] = stmt
        return stmt

    def release_lock(self, resource_id, holder):
        """Release the lock of ``holder`` on a row, if it still holds it."""
        table = models.Resource.__table__
        with self._single.begin() as conn:
            conn.execute(
                sa.update(table)
                .where(table.c.id == resource_id, table.c.engine_id == holder,
                       fencing.not_taken_over(table.c.stack_id))
                .values(engine_id=None, atomic_key=table.c.atomic_key + 1,
                        updated_at=models.utcnow()),
                fencing.holder_params(None, holder))

    def update_resource(self, row, holder, event=None, release=False, **values):
        """Compare-and-swap write of a locked resource row; returns the new key.

        ``row`` is the caller's last view of the resource; the write happens
        only if nobody wrote it since (same atomic key, same lock holder).
        ``event``: also record the new state as an event by that engine id.
        Every resource action runs this twice or more, so it is plain Core
        with statements built once per set of columns, not the ORM.
        """
        if release:
            values["engine_id"] = None
        self.transaction(lambda conn: self._cas_write(conn, row, holder, values, event))
        return _applied(row, values)

    def _cas_write(self, conn, row, holder, values, event, writes=None, ownership=None):
        """update_resource's write, in the caller's transaction; ``row`` is
        left as it was (apply ``values`` once committed: :func:`_applied`).

        ``writes``: the successive writes ``values`` merges, each that sets
        an action or status recorded as an event of its own (default:
        ``values`` alone). ``ownership``
        (see :meth:`write_free_resource`): the row must be free instead of
        locked by ``holder``, and the traversal still the stack's.
        """
        now = values["updated_at"] = models.utcnow()
        params = {f"v_{key}": value for key, value in values.items()}
        params.update(w_id=row.id, w_key=row.atomic_key, w_holder=holder,
                      v_atomic_key=row.atomic_key + 1)
        columns = frozenset(values)
        free = None
        if ownership is not None:
            free = ownership["free"]
            params.update(w_stack=ownership["w_stack"], w_traversal=ownership["w_traversal"],
                          w_owner=ownership["w_owner"])
        else:
            params.update(fencing.holder_params(row.stack_id, holder))
        events = self._event_params(row, writes or [values], event, now) if event else ()
        # Precompiled: every resource action makes two or three of these
        # writes, and SQLAlchemy's cache look-up alone cost more than the
        # rest of their client side (db.precompiled).
        if not events:
            result = precompiled.execute(conn, self._cas_statement(columns, free), params)
        else:
            if self.dialect == "postgresql":
                # One statement: the events are inserted only if the write
                # happened, so its row count is the write's.
                for i, fields in enumerate(events):
                    params.update({f"e{i}_{name}": value for name, value in fields.items()})
                result = precompiled.execute(
                    conn, self._cas_with_events_statement(columns, len(events), free), params)
                # Several events: the insert's count; one per event written.
                written = result.rowcount == len(events)
            else:
                result = precompiled.execute(conn, self._cas_statement(columns, free), params)
                written = result.rowcount == 1
                if written:
                    precompiled.execute(conn, self._event_insert_from_params,
                                        [{f"e_{name}": value for name, value in fields.items()}
                                         for fields in events])
            if not written:
                raise exceptions.ResourceLocked(row.name, "a newer owner")
            if self._event_listeners:
                self._events_written(row, events)
            return
        if result.rowcount != 1:
            raise exceptions.ResourceLocked(row.name, "a newer owner")

    @staticmethod
    def _event_params(row, writes, event, now=None):
        """The event columns of each of ``writes``, applied one after another
        to ``row``, at ``now`` (default: now)."""
        now = now or models.utcnow()
        current = {}
        fields = []
        for values in writes:
            current.update(values)
            if "action" not in values and "status" not in values:
                continue  # not a state change: no event (a kept resource's data)
            fields.append({
                "stack_id": row.stack_id,
                "resource_name": row.name,
                "resource_id": row.id,
                "physical_id": current.get("physical_id", row.physical_id),
                "action": current.get("action", row.action),
                "status": current.get("status", row.status),
                "status_reason": values.get("status_reason", ""),
                "traversal_id": current.get("traversal_id", row.traversal_id),
                "engine_id": event,
                "timestamp": now,
            })
        return fields

    def _cas_with_events_statement(self, columns, count, free=None):
        """PostgreSQL: the compare-and-swap write and its events in one
        statement (a data-modifying CTE), a round trip less per write."""
        key = ("with_events", columns, count, free)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            written = self._cas_statement(columns, free).returning(
                models.Resource.__table__.c.id).cte("written")
            events = models.Event.__table__
            # UNION ALL keeps the events in order: their ids follow it.
            rows = [sa.select(*(self._event_value(f"e{i}_{name}", name)
                                for name in EVENT_COLUMNS)).select_from(written)
                    for i in range(count)]
            stmt = events.insert().from_select(
                list(EVENT_COLUMNS), rows[0] if count == 1 else sa.union_all(*rows))
            self._cas_statements[key] = stmt
        return stmt

    def _cas_statement(self, columns, free=None):
        """The compare-and-swap UPDATE of ``columns`` of a row locked by
        ``w_holder``; or, with ``free`` = (with owner, cancelled ok), of a
        free row while the traversal owns the stack (as the lock requires)."""
        key = (columns, free)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Resource.__table__
            if free is None:
                # The holder's run must not have been replaced: checked
                # (and kept, by a lock on the stack row) until the commit.
                held = [table.c.engine_id == sa.bindparam("w_holder"),
                        fencing.not_taken_over()]
            else:
                held = [table.c.engine_id.is_(None), self._owns_clause(*free)]
            stmt = (
                sa.update(table)
                .where(table.c.id == sa.bindparam("w_id"),
                       table.c.atomic_key == sa.bindparam("w_key"), *held)
                .values({name: sa.bindparam(f"v_{name}", type_=table.c[name].type)
                         for name in (*columns, "atomic_key")})
            )
            self._cas_statements[key] = stmt
        return stmt

    @staticmethod
    def _owns_clause(with_owner, cancelled_ok):
        """The stack's current traversal is ``w_traversal`` (run by
        ``w_owner``, and not cancelled unless ``cancelled_ok``)."""
        stack = models.Stack.__table__
        owns = [stack.c.id == sa.bindparam("w_stack"),
                stack.c.current_traversal == sa.bindparam("w_traversal")]
        if with_owner:
            owns.append(stack.c.traversal_owner == sa.bindparam("w_owner"))
        if not cancelled_ok:
            owns.append(stack.c.cancel_requested.is_(None))
        # Locked: the statements after it in the lock's transaction are
        # fenced by it too, until the commit.
        return fencing.owns_stack(*owns)


class _Changed(Exception):
    """A wave's run no longer owns its stack, or a row of it was written
    since it was read: roll the wave back."""


def run_start(row, start, write):
    """Make the writes ``start(row)`` asks for (the protocol of
    :meth:`ResourceStore.try_lock_resource`'s ``start``), in order, through
    ``write(row, values)``, which returns the row as written: a callable
    step sees the row as the writes before it left it, and a step giving
    no values ends them. Returns the row as the last write left it."""
    steps = start(row) if start is not None else None
    for step in (steps if isinstance(steps, list) else [steps] if steps else []):
        values = step(row) if callable(step) else step
        if not values:
            break
        row = write(row, values)
    return row


def _run_steps(view, start):
    """The writes ``start(view)`` asks for, merged into one, and each of
    them (for its event); ``view`` is changed as each would change it."""
    merged, writes = {}, []

    def merge(view, values):
        writes.append(dict(values))
        merged.update(values)
        for key, value in values.items():
            setattr(view, key, value)
        return view

    run_start(view, start, merge)
    return merged, writes


def _applied(row, values):
    """``row`` as a compare-and-swap write of ``values`` left it."""
    for key, value in values.items():
        setattr(row, key, value)
    row.atomic_key += 1
    return row
