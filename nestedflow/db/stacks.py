"""Stacks, their template versions and traversals: which traversal owns a
stack is decided here, by compare-and-swap writes."""

import sqlalchemy as sa

from nestedflow import exceptions, states
from nestedflow.db import core_reads, fencing, models, plans
from nestedflow.db.events import EVENT_COLUMNS

#: The columns a new stack's INSERT sets: all but those only a later write
#: fills (a JSON column given None would store JSON null, not SQL NULL).
_STACK_INSERT_COLUMNS = tuple(column.key for column in models.Stack.__table__.columns
                              if column.key not in ("outputs", "output_errors"))


class StackStore:
    """The stacks part of :class:`nestedflow.db.api.Database`."""

    #: The owner a new traversal has until a run claims it: an embedded
    #: engine's ``<engine id>:queued`` (engine.recovery), else None.
    queued_owner = None

    def _build_stack_statements(self):
        stacks = models.Stack.__table__
        self._stack_by_id = sa.select(stacks).where(stacks.c.id == sa.bindparam("w_id"))
        self._stack_by_name = (
            sa.select(stacks)
            .where(stacks.c.name == sa.bindparam("w_name"), stacks.c.deleted_at.is_(None))
            .order_by(stacks.c.created_at.desc()).limit(1))
        self._stack_by_name_in_project = self._stack_by_name.where(
            stacks.c.project_id.is_not_distinct_from(sa.bindparam("w_project")))
        self._claim = (
            sa.update(stacks)
            .where(stacks.c.id == sa.bindparam("w_id"),
                   stacks.c.current_traversal == sa.bindparam("w_traversal"))
            .values(traversal_owner=sa.bindparam("v_owner"),
                    atomic_key=stacks.c.atomic_key + 1))
        # Built once: a statement made per call costs its cache key and the
        # matching of its result columns to the cached compilation's.
        self._claim_returning = self._claim.returning(*stacks.c)
        self._template_insert = sa.insert(models.RawTemplate.__table__)
        stack_params = {name: sa.bindparam(f"s_{name}", type_=stacks.c[name].type)
                        for name in _STACK_INSERT_COLUMNS}
        self._stack_insert = sa.insert(stacks).values(stack_params)
        self._stack_insert_if_name_free = sa.insert(stacks).from_select(
            list(_STACK_INSERT_COLUMNS),
            sa.select(*stack_params.values()).where(~sa.exists().where(
                stacks.c.name == sa.bindparam("s_name"), stacks.c.deleted_at.is_(None),
                stacks.c.parent_id.is_(None),
                # Unique per project, as in Heat (stack_get_by_name is per tenant).
                stacks.c.project_id.is_not_distinct_from(sa.bindparam("s_project_id")))))
        self._ownership = sa.select(
            stacks.c.current_traversal, stacks.c.traversal_owner, stacks.c.cancel_requested,
            stacks.c.disable_rollback).where(stacks.c.id == sa.bindparam("w_id"))
        #: By ``unique_name``: the create's stack insert.
        self._stack_inserts = {False: self._stack_insert, True: self._stack_insert_if_name_free}
        if self.dialect == "postgresql":
            # A stack and its "started" event in one statement (data-modifying
            # CTE): a round trip less on every create.
            self._stack_inserts = {unique: self._with_started_event(insert)
                                   for unique, insert in self._stack_inserts.items()}
        resources = models.Resource.__table__
        self._resources_insert = sa.insert(resources).returning(
            resources.c.id, sort_by_parameter_order=True)
        self._edges_update = sa.update(resources).where(
            resources.c.id == sa.bindparam("e_id")).values(
            requires=sa.bindparam("e_requires"), needed_by=sa.bindparam("e_needed_by"))

    def _with_started_event(self, insert):
        """PostgreSQL: ``insert`` of a stack, and its started event if it
        inserted the stack (the statement's row count is the stack's)."""
        inserted = insert.returning(models.Stack.__table__.c.id).cte("inserted")
        return models.Event.__table__.insert().from_select(
            list(EVENT_COLUMNS),
            sa.select(*(self._event_value(f"e_{name}", name) for name in EVENT_COLUMNS))
            .select_from(inserted))

    def on_stack_change(self, callback, last=False):
        """Call ``callback(stack_id, action, status, stack)`` after a stack's
        state is written: a traversal started, was cancelled, or settled.
        ``stack`` is the row as written (a :class:`models.StackRow`) where
        the write returned it, else None. ``last``: after every other
        listener (a waiter woken by it finds them all told)."""
        if last:
            self._last_change_listeners.append(callback)
        else:
            self._change_listeners.append(callback)

    def _changed(self, stack_id, action, status, stack=None):
        for callback in self._change_listeners:
            callback(stack_id, action, status, stack)
        for callback in self._last_change_listeners:
            callback(stack_id, action, status, stack)

    def create_stack(self, stack_values, template_values, resource_values,
                     unique_name=False, fence=None):
        """Store a stack, its template and its resource rows in one transaction;
        returns the stack row as stored.

        ``resource_values`` are dicts whose ``requires`` name other resources;
        they are turned into row ids so the graph survives template changes.
        ``unique_name``: store nothing and raise :class:`exceptions.StackExists`
        if a live top-level stack has the name -- tested by the stack's
        INSERT itself, not by a query of its own. ``fence``: the parent's
        run making this nested stack (fencing.check_run), checked in the
        same transaction.
        """
        now = models.utcnow()
        stack = _full_row(models.Stack.__table__, {"traversal_owner": self.queued_owner,
                                                   **stack_values, "created_at": now})
        with self._engine.begin() as conn:
            fencing.check_run(conn, fence)
            template_id = conn.execute(
                self._template_insert, {"created_at": now, **template_values}
            ).inserted_primary_key[0]
            stack["raw_template_id"] = template_id
            params = {f"s_{key}": stack[key] for key in _STACK_INSERT_COLUMNS}
            # The create's "started" event, as every other traversal has
            # (Heat's converge_stack adds one for each action).
            event = _started_event(stack)
            event_in_insert = self.dialect == "postgresql"
            if event_in_insert:
                params.update(event)
            if conn.execute(self._stack_inserts[unique_name], params).rowcount != 1:
                raise exceptions.StackExists(stack["name"])
            if not event_in_insert:
                conn.execute(self._event_insert_from_params, event)
            self._add_resources(conn, stack["id"], template_id, resource_values)
        self._templates.put(models.RawTemplate(id=template_id, created_at=now,
                                               **template_values))
        return models.StackRow.from_mapping(stack)

    def _add_resources(self, session, stack_id, template_id, resource_values, existing=None):
        """Insert resource rows; ``requires`` names resolve to new rows first,
        then to ``existing`` (name -> id of a current row).

        Core statements, not ORM objects: a thousand-resource stack is one
        INSERT (RETURNING the ids, in order, where the database can) and
        one batch of UPDATEs for the edges, which need those ids.
        """
        if not resource_values:
            return
        inserted = session.execute(
            self._resources_insert,
            [{**{k: v for k, v in values.items() if k != "requires"},
              "stack_id": stack_id, "template_id": template_id}
             for values in resource_values])
        new_ids = {values["name"]: row_id
                   for values, (row_id,) in zip(resource_values, inserted, strict=True)}
        ids = {**(existing or {}), **new_ids}
        requires = {name: [] for name in new_ids}
        needed_by = {name: [] for name in new_ids}
        for values in resource_values:
            name = values["name"]
            for dep in values["requires"]:
                if dep in ids:
                    requires[name].append(ids[dep])
                if dep in needed_by:
                    needed_by[dep].append(new_ids[name])
        # A row with no edge keeps what its insert wrote (the columns'
        # default, []): a flat stack of 1,000 updated 1,000 rows to [] and
        # [] again, 2,000 JSON values and a tenth of storing it.
        edges = [{"e_id": new_ids[name], "e_requires": sorted(requires[name]),
                  "e_needed_by": sorted(needed_by[name])}
                 for name in new_ids if requires[name] or needed_by[name]]
        if edges:
            session.execute(self._edges_update, edges)

    def begin_update(self, stack_id, expected_traversal, new_traversal, action,
                     template_values, resource_values, fence=None, **values):
        """Store a new template version and take over the stack for it.

        One transaction: either the new traversal owns the stack with its
        template and the rows of added resources, or nothing changed.
        """
        with self.writer() as session:
            fencing.check_run(session.connection(), fence)  # a parent's run: see create_stack
            stack = session.get(models.Stack, stack_id)
            tmpl = models.RawTemplate(**template_values)
            session.add(tmpl)
            session.flush()
            existing = {
                row.name: row.id
                for row in session.scalars(
                    sa.select(models.Resource).where(
                        models.Resource.stack_id == stack_id,
                        models.Resource.current.is_(True),
                    )
                )
            }
            self._cas_traversal(
                session, stack_id, expected_traversal, new_traversal, action,
                {"traversal_owner": self.queued_owner, "raw_template_id": tmpl.id,
                 "prev_raw_template_id": stack.raw_template_id, **values},
            )
            self._add_resources(session, stack_id, tmpl.id, resource_values, existing)
        self._templates.put(tmpl)
        self._changed(stack_id, action, states.IN_PROGRESS)
        return tmpl.id

    def get_stack(self, stack_id):
        with self._single.connect() as conn:
            found = conn.execute(self._stack_by_id, {"w_id": stack_id}).first()
        if found is None:
            raise exceptions.StackNotFound(stack_id)
        return models.StackRow.from_mapping(found._mapping)

    def find_stack(self, name_or_id, project_id=None, scoped=False):
        """By id, else by name among stacks not deleted (newest first);
        ``scoped``: a name is looked up among ``project_id``'s stacks only."""
        with self.connect() as conn:
            found = conn.execute(self._stack_by_id, {"w_id": name_or_id}).first()
            if found is None and scoped:
                found = conn.execute(self._stack_by_name_in_project,
                                     {"w_name": name_or_id, "w_project": project_id}).first()
            elif found is None:
                found = conn.execute(self._stack_by_name, {"w_name": name_or_id}).first()
        if found is None:
            raise exceptions.StackNotFound(name_or_id)
        return models.StackRow.from_mapping(found._mapping)

    def list_stacks(self, show_nested=False, project_id=None, scoped=False, show_deleted=False):
        """Live stacks (``scoped``: of ``project_id`` only; ``show_deleted``:
        deleted ones too), oldest first."""
        with self.reader() as session:
            found = session.execute(core_reads.live_stacks(show_nested, project_id, scoped,
                                                           show_deleted))
            return [models.StackRow.from_mapping(row._mapping) for row in found]

    def count_tree_resources(self, root_id, exclude_stack=None):
        """Current resources of every live stack in the tree rooted at ``root_id``."""
        with self.reader() as session:
            query = (
                sa.select(sa.func.count(models.Resource.id))
                .join(models.Stack, models.Stack.id == models.Resource.stack_id)
                .where(models.Stack.root_id == root_id, models.Stack.deleted_at.is_(None),
                       models.Resource.current.is_(True))
            )
            if exclude_stack is not None:
                query = query.where(models.Stack.id != exclude_stack)
            return session.scalar(query) or 0

    def list_children(self, stack_id):
        with self.reader() as session:
            return list(session.scalars(
                sa.select(models.Stack).where(models.Stack.parent_id == stack_id)
                .order_by(models.Stack.created_at)))

    def get_template(self, template_id):
        """A stored template version. They are never changed or deleted and
        their ids are never reused, so the ones this process stored or
        read last are kept: every traversal of a stack reads its template.
        Callers share what it returns and must not change it."""
        cached = self._templates.get(template_id)
        if cached is not None:
            return cached
        with self.reader() as session:
            tmpl = session.get(models.RawTemplate, template_id)
        if tmpl is not None:
            self._templates.put(tmpl)
        return tmpl

    def begin_traversal(self, stack_id, expected_traversal, new_traversal, action, fence=None,
                        plan=None, **values):
        """Atomically make ``new_traversal`` the stack's current one
        (``fence``: see create_stack), storing its ``plan``
        (:class:`nestedflow.db.plans.Plan`) in the same transaction."""
        with self.writer() as session:
            fencing.check_run(session.connection(), fence)
            if plan is not None:
                plans.add(session, stack_id, new_traversal, plan)
            self._cas_traversal(session, stack_id, expected_traversal, new_traversal, action,
                                {"traversal_owner": self.queued_owner, **values})
        self._changed(stack_id, action, states.IN_PROGRESS)

    @staticmethod
    def _cas_traversal(session, stack_id, expected_traversal, new_traversal, action, values):
        result = session.execute(
            sa.update(models.Stack)
            .where(
                models.Stack.id == stack_id,
                models.Stack.current_traversal == expected_traversal,
            )
            .values(
                **{
                    "status_reason": "",
                    **values,
                    "current_traversal": new_traversal,
                    # Claimed by the run that starts it; until then, the
                    # embedded engine that queued it (engine.recovery).
                    "traversal_owner": values.get("traversal_owner"),
                    "cancel_requested": None,
                    "action": action,
                    "status": states.IN_PROGRESS,
                    "atomic_key": models.Stack.atomic_key + 1,
                    "updated_at": models.utcnow(),
                }
            )
        )
        if result.rowcount != 1:
            raise exceptions.TraversalSuperseded(stack_id, expected_traversal)
        session.add(models.Event(stack_id=stack_id, action=action, status=states.IN_PROGRESS,
                                 status_reason=values.get("status_reason", ""),
                                 traversal_id=new_traversal))

    def traversal_started_at(self, stack, traversal_id):
        """When ``traversal_id`` of ``stack`` began: its "started" event, or
        the stack's creation for a create stored before creates had one."""
        with self.reader() as session:
            started = session.scalar(
                sa.select(sa.func.min(models.Event.timestamp))
                .where(models.Event.stack_id == stack.id,
                       models.Event.traversal_id == traversal_id,
                       models.Event.resource_name.is_(None))
            )
        return started or stack.created_at

    def claim_traversal(self, stack_id, traversal_id, owner):
        """Make ``owner`` (one run of the traversal) the only one allowed to write.

        A later claim fences an earlier run of the same traversal -- e.g. a
        conductor that was paused past its ZooKeeper session.

        Returns the stack as the claim left it: the run builds its flow
        from it (read back in the same transaction where the database
        cannot return it from the UPDATE).
        """
        params = {"w_id": stack_id, "w_traversal": traversal_id, "v_owner": owner}
        with self._single.begin() as conn:
            if self._engine.dialect.update_returning:
                found = conn.execute(self._claim_returning, params).first()
            else:
                claimed = conn.execute(self._claim, params).rowcount == 1
                found = (conn.execute(self._stack_by_id, params).first() if claimed
                         else None)
        if found is None:
            raise exceptions.TraversalSuperseded(stack_id, traversal_id)
        return models.StackRow.from_mapping(found._mapping)

    def fence_run(self, stack_id, traversal_id, owner, lapsed_owner):
        """Fence run ``owner`` of the traversal off, if it still owns it, by
        making ``lapsed_owner`` (a token no run holds) the owner: every
        write of the run is refused from then on. A conductor does this to
        its own runs whose claims lapsed with its ZooKeeper session. True
        if the run was the owner."""
        stacks = models.Stack.__table__
        with self._single.begin() as conn:
            return conn.execute(
                sa.update(stacks)
                .where(stacks.c.id == stack_id, stacks.c.current_traversal == traversal_id,
                       stacks.c.traversal_owner == owner)
                .values(traversal_owner=lapsed_owner, atomic_key=stacks.c.atomic_key + 1)
            ).rowcount == 1

    def ownership(self, stack_id):
        """(current traversal, its owner, pending cancel, disable_rollback).

        Core, with the statement built once: every journal flush and every
        wait poll asks this.
        """
        with self._single.connect() as conn:
            row = conn.execute(self._ownership, {"w_id": stack_id}).first()
        if row is None:
            raise exceptions.StackNotFound(stack_id)
        return tuple(row)

    def request_cancel(self, stack_id, traversal_id, mode):
        with self.writer() as session:
            result = session.execute(
                sa.update(models.Stack)
                .where(models.Stack.id == stack_id,
                       models.Stack.current_traversal == traversal_id,
                       models.Stack.status == states.IN_PROGRESS)
                .values(cancel_requested=mode, atomic_key=models.Stack.atomic_key + 1)
            )
            if result.rowcount != 1:
                raise exceptions.ActionNotAllowed(
                    f"stack {stack_id} has no traversal in progress to cancel"
                )
        self._changed(stack_id, states.CANCEL, mode)

    def set_stack_state(self, stack_id, traversal_id, action, status, reason="", owner=None,
                        **values):
        """Write the stack's state only while ``traversal_id`` (and, if given,
        this run of it) is still current, with its event; returns the stack
        as written where the write can return it (else None).

        Core, one statement on PostgreSQL: every traversal settles here,
        and a waiter wakes only once it has.
        """
        now = models.utcnow()
        values = {"action": action, "status": status, "status_reason": reason,
                  "updated_at": now, **values}
        params = {f"v_{key}": value for key, value in values.items()}
        params.update(w_id=stack_id, w_traversal=traversal_id, w_owner=owner)
        event = {"stack_id": stack_id, "resource_name": None, "resource_id": None,
                 "physical_id": None, "action": action, "status": status,
                 "status_reason": reason, "traversal_id": traversal_id, "engine_id": None,
                 "timestamp": now}
        columns = frozenset(values)
        written = None
        with self._single.begin() as conn:
            if self.dialect == "postgresql":
                params.update({f"e_{key}": value for key, value in event.items()})
                found = conn.execute(self._settle_statement(columns, owner is not None),
                                     params).first()
                if found is None:
                    raise exceptions.TraversalSuperseded(stack_id, traversal_id)
                written = models.StackRow.from_mapping(found._mapping)
            else:
                stmt = self._stack_state_statement(columns, owner is not None)
                if self._engine.dialect.update_returning:
                    found = conn.execute(stmt.returning(*models.Stack.__table__.c),
                                         params).first()
                    ok = found is not None
                    if ok:
                        written = models.StackRow.from_mapping(found._mapping)
                else:
                    ok = conn.execute(stmt, params).rowcount == 1
                if not ok:
                    raise exceptions.TraversalSuperseded(stack_id, traversal_id)
                conn.execute(self._event_insert_from_params,
                             {f"e_{key}": value for key, value in event.items()})
        self._changed(stack_id, action, status, written)
        return written

    def _stack_state_statement(self, columns, with_owner):
        """set_stack_state's compare-and-swap UPDATE of ``columns``."""
        key = ("stack_state", columns, with_owner)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Stack.__table__
            conditions = [table.c.id == sa.bindparam("w_id"),
                          table.c.current_traversal == sa.bindparam("w_traversal")]
            if with_owner:
                conditions.append(table.c.traversal_owner == sa.bindparam("w_owner"))
            stmt = (sa.update(table).where(*conditions)
                    .values({name: sa.bindparam(f"v_{name}", type_=table.c[name].type)
                             for name in columns})
                    .values(atomic_key=table.c.atomic_key + 1))
            self._cas_statements[key] = stmt
        return stmt

    def _settle_statement(self, columns, with_owner):
        """PostgreSQL: set_stack_state's UPDATE and its event in one
        statement (data-modifying CTEs), returning the stack as written."""
        key = ("settle", columns, with_owner)
        stmt = self._cas_statements.get(key)
        if stmt is None:
            table = models.Stack.__table__
            written = self._stack_state_statement(columns, with_owner).returning(
                *table.c).cte("written")
            events = models.Event.__table__
            event = events.insert().from_select(
                list(EVENT_COLUMNS),
                sa.select(*(self._event_value(f"e_{name}", name)
                            for name in EVENT_COLUMNS)).select_from(written),
            ).cte("event")
            stmt = sa.select(*(written.c[c.key] for c in table.c)).add_cte(event)
            self._cas_statements[key] = stmt
        return stmt


def _started_event(stack):
    """The event row of a stack's traversal starting, as insert parameters."""
    event = {"stack_id": stack["id"], "resource_name": None, "resource_id": None,
             "physical_id": None, "action": stack["action"], "status": stack["status"],
             "status_reason": stack["status_reason"] or "",
             "traversal_id": stack["current_traversal"], "engine_id": None,
             "timestamp": stack["created_at"]}
    return {f"e_{key}": value for key, value in event.items()}


def _full_row(table, values):
    """Every column of a new ``table`` row: ``values``, else the column's
    constant default, else None (callable defaults must be in ``values``)."""
    row = {}
    for column in table.columns:
        if column.key in values:
            row[column.key] = values[column.key]
        elif column.default is not None and column.default.is_scalar:
            row[column.key] = column.default.arg
        else:
            row[column.key] = None
    return row
