"""Bringing a resource to an update's template (or a rollback's)."""

from nestedflow import exceptions, states
from nestedflow.db import models
from nestedflow.flows import hooks
from nestedflow.flows.scope import replacement_key
from nestedflow.flows.tasks.base import (
    ATTR_ERRORS,
    SYMBOL,
    UNDO,
    ResourceTask,
    inputs_by_name,
    is_gone,
    output_of,
    stored_undo,
)
from nestedflow.flows.tasks.delete import delete_resource
from nestedflow.resources import external
from nestedflow.stacks import changes


class ConvergeResource(ResourceTask):
    """Bring an existing resource to the new template: keep, update or replace.

    Its result's ``undo`` says what the revert must do: delete the object it
    ``created``, give back the properties an in-place update changed
    (``updated``/``previous``), or make the original of a replacement
    current again (``replaced``/``replacement``).
    """

    ACTION = states.UPDATE

    def __init__(self, scope, row, dependency_names):
        super().__init__(scope, row, requires=[SYMBOL.format(n) for n in dependency_names],
                         provides=SYMBOL.format(row.name))

    def _current(self, start=None):
        """Lock the current version: an older traversal may have replaced
        ours. ``start``: as :meth:`TraversalScope.lock`'s, for each version
        locked (it writes nothing to one that was replaced)."""
        scope = self.scope
        row = scope.lock(self.row_id, start=start)
        while row.replaced_by is not None:
            scope.release(row)
            row = scope.lock(row.replaced_by, start=start)
        return row

    def execute(self, traversal, **inputs):
        scope = self.scope
        plan = {}
        row = self._current(start=self._start(inputs, plan))
        if plan.get("change") == changes.UNCHANGED:
            return self._done(row, None)  # written and released with the lock
        if plan.get("change") == changes.UPDATE:
            return self._update_in_place(row, plan["properties"], inputs)
        if self._rerun_done(row):
            # Re-run after a crash: the journal may not have kept the result,
            # so what the revert must undo comes from the row.
            return self._done(scope.release(row), stored_undo(row, scope))
        properties = self.resolve(inputs, row)
        if self._decide(row, properties) == changes.CREATE:
            undo = {"created": row.id}
            # An older traversal's cleanup may have retired the row while this
            # traversal (whose template has the resource) was starting: the
            # object made now is the current version again.
            row = self.create_on(row, properties, type_name=self._new_type(), release=True,
                                 undo=undo, revive=not row.current)
            return self._done(row, undo)
        try:
            properties = self._external_properties(row, properties)
        except exceptions.NotSupported as error:
            raise self.fail(row, states.UPDATE, error) from error
        # An in-place update of this traversal that a crash interrupted is
        # decided as if it had finished: run again in place where its type
        # says that is safe (Resource.update_resumable), else replaced.
        change = self._decide(self._as_finished(row) if self._resumes_in_place(row) else row,
                              properties)
        # A failed or interrupted action left the object in an unknown state:
        # replace it (as Heat does); cleanup deletes whatever the old row made.
        if change == changes.REPLACE:
            return self._replace(row, properties, inputs)
        if change == changes.UNCHANGED:
            row = scope.write(row, release=True, **self._kept(row))
            return self._done(row, None)
        row = scope.write(row, event=scope.runtime.engine_id, **self._updating())
        return self._update_in_place(row, properties, inputs)

    def _start(self, inputs, plan):
        """The lock's ``start`` (:meth:`TraversalScope.lock`): its first
        write -- all of a kept resource's write (it releases the lock), or an
        in-place update's IN_PROGRESS; one commit less each -- or None.

        Decided before the lock, outside any transaction (attributes may
        read the database: a nested stack's outputs), from the row as the
        flow was built; it applies only if the row locked is still that
        one. ``plan`` learns the decision. Anything else (a replaced
        version, a re-run, a create, a replacement, an error to record) is
        left to :meth:`execute`, which decides again with the row locked.
        """
        # A later run of this task (a retry) reads the row anew.
        row, self._snapshot = self._snapshot, None
        if row is None or row.id != self.row_id or row.replaced_by is not None or (
                self._rerun_done(row) or self._resumes_in_place(row)):
            return None
        try:
            properties = self._external_properties(row, self.resolve(inputs))
            change = self._decide(row, properties)
            if change == changes.UNCHANGED:
                values = {**self._kept(row), "engine_id": None}
            elif change == changes.UPDATE:
                values = self._updating()
            else:
                return None
        except Exception:  # recorded on the locked row by execute's slow path
            return None
        seen = row.atomic_key

        def start(locked):
            # Only the lock's own write since the row was read.
            if locked.id != row.id or locked.atomic_key != seen + 1:
                return None
            plan.update(change=change, properties=properties)
            return values

        return start

    def _rerun_done(self, row):
        return row.traversal_id == self.scope.traversal_id and row.status == states.COMPLETE and (
            row.action in (states.UPDATE, states.CREATE))

    def _external_properties(self, row, properties):
        """An adopted (``external_id``) resource's properties stay as they were."""
        if external.unchanged_on_update(
                row.name, row.type, (row.attr_data or {}).get("data"),
                self.scope.definition.external_id(self.resource_name)):
            return row.properties_data or {}
        return properties

    def _kept(self, row):
        """The write of a resource the update leaves as it is: no plugin
        action, but dependents still get its data."""
        scope = self.scope
        data = dict(row.attr_data or {})
        data.pop(UNDO, None)
        data.pop(ATTR_ERRORS, None)
        data.update(self.attributes(scope.plugin(row, row.properties_data or {})))
        return {"attr_data": data, "traversal_id": scope.traversal_id}

    def _updating(self):
        return {"action": states.UPDATE, "status": states.IN_PROGRESS,
                "status_reason": "state changed", "traversal_id": self.scope.traversal_id}

    def _update_in_place(self, row, properties, inputs):
        """Update the object of ``row``, which is UPDATE_IN_PROGRESS."""
        scope = self.scope
        old = row.properties_data or {}
        plugin = scope.plugin(row, old)
        try:
            hooks.break_if_required(scope, row, states.UPDATE, "pre-update")
            scope.checks.before(plugin, states.UPDATE)
            new_id = plugin.update(properties, old)
        except exceptions.UpdateReplace:
            row = scope.set_state(row, states.UPDATE, states.COMPLETE, "replacing")
            return self._replace(row, properties, inputs)
        except Exception as error:
            raise self.fail(row, states.UPDATE, error) from error
        try:
            scope.checks.after(plugin, states.UPDATE)
        except Exception as error:
            raise self.fail(row, states.UPDATE, error) from error
        undo = {"updated": row.id, "previous": old}
        data = {"ref": plugin.reference_id(), **self.attributes(plugin),
                "data": plugin.stored_data(),
                "fingerprint": self.fingerprint(row.type, properties),
                UNDO: {"traversal": scope.traversal_id, **undo}}
        row = scope.set_state(row, states.UPDATE, states.COMPLETE, "state changed", release=True,
                              properties_data=properties, attr_data=data,
                              physical_id=new_id or row.physical_id)
        return self._done(row, undo)

    def _done(self, row, undo):
        """The task's result once ``row`` is converged (and released); tells
        the cleanup whether this task's row is still the current one."""
        self.scope.converged[self.row_id] = row.id == self.row_id and bool(row.current)
        return {**output_of(row), "undo": undo}

    def _decide(self, row, properties):
        """The update's decision, which previews ask too (stacks.changes)."""
        return changes.decide(self.scope.runtime.registry, row, self._new_type(), properties,
                              self.fingerprint(row.type, properties))

    @staticmethod
    def _as_finished(row):
        finished = models.ResourceRow.copy(row)
        finished.status = states.COMPLETE
        return finished

    def _resumes_in_place(self, row):
        """Was ``row``'s in-place update of this traversal interrupted, and
        may its type run it again (:attr:`Resource.update_resumable`)?"""
        if (row.action, row.status) != (states.UPDATE, states.IN_PROGRESS) or (
                row.traversal_id != self.scope.traversal_id):
            return False
        try:
            return self.scope.runtime.registry.get(row.type).update_resumable
        except exceptions.NestedflowError:
            return False

    def _new_type(self):
        return self.scope.definition.resources[self.resource_name].type

    def _replace(self, row, properties, inputs):
        """Create a replacement first; the original is deleted in cleanup."""
        scope = self.scope
        # Heat's Resource.update pauses before it decides to replace.
        try:
            hooks.break_if_required(scope, row, states.UPDATE, "pre-update")
        except Exception as error:
            raise self.fail(row, states.UPDATE, error) from error
        requires = [value["row"] for value in inputs_by_name(inputs).values()
                    if isinstance(value, dict) and value.get("row")]
        # Inserted CREATE_IN_PROGRESS: its create's start costs no commit.
        # A row of its own, nothing of the original's data (as Heat's
        # Resource.make_replacement, heat/engine/resource.py) and its own
        # create key: cleanup deletes what the original's key finds (an
        # interrupted create of this traversal left that key on the
        # original), which must not be the replacement's object.
        new = scope.db.add_replacement(row, scope.holder, scope.stack.raw_template_id,
                                       requires, type_name=self._new_type(),
                                       traversal_id=scope.traversal_id,
                                       start=self.create_start(
                                           replacement_key(row.id, scope.traversal_id),
                                           properties),
                                       event=scope.runtime.engine_id)
        scope.mark_held(new.id, True)
        undo = {"replaced": row.id, "replacement": new.id}
        try:
            completed = self.created(new, properties, undo)
        except Exception as error:
            raise self.fail(new, states.CREATE, error) from error
        # Its CREATE_COMPLETE in the swap's transaction: one commit less.
        scope.db.swap_current(row, new, scope.holder, release=True, completed=completed,
                              event=scope.runtime.engine_id)
        scope.mark_held(row.id, False)
        scope.mark_held(new.id, False)
        return self._done(new, undo)

    def revert(self, traversal=None, result=None, flow_failures=None, **inputs):
        scope = self.scope
        if not scope.is_owner() or not scope.rollback_enabled():
            return
        if not isinstance(result, dict):
            # The execute failed (or never finished): undo what it left.
            self._revert_failed()
            return
        undo = result.get("undo") or {}
        if undo.get("replaced"):
            self._revert_replacement(undo["replaced"], undo["replacement"])
        elif undo.get("created"):
            row = scope.lock(undo["created"])
            delete_resource(scope, row, honour_retain=False, retire=self._added(row))
        elif undo.get("updated"):
            row = scope.lock(undo["updated"])
            plugin = scope.plugin(row, row.properties_data or {})
            row = scope.set_state(row, states.UPDATE, states.IN_PROGRESS, "rolling back")
            new_id = plugin.update(undo["previous"], row.properties_data or {})
            scope.set_state(row, states.UPDATE, states.COMPLETE, "rolled back", release=True,
                            properties_data=undo["previous"],
                            physical_id=new_id or row.physical_id)

    def _added(self, row):
        """Did this update add the resource (so the rollback retires its row)?"""
        return row.template_id == self.scope.stack.raw_template_id and row.replaces is None

    def _revert_replacement(self, original_id, replacement_id):
        """The original becomes current again; the replacement goes."""
        scope = self.scope
        original = scope.lock(original_id)
        new = scope.lock(replacement_id)
        if new.current:
            scope.db.swap_current(new, original, scope.holder)
        delete_resource(scope, new, honour_retain=False, retire=True)
        scope.write(original, release=True, current=True, replaced_by=None)

    def _revert_failed(self):
        scope = self.scope
        row = self._current()
        # A replacement whose create failed: never made current.
        for other in scope.db.list_all_resources(row.stack_id):
            if other.replaces == row.id and other.traversal_id == scope.traversal_id and (
                    not other.current and not is_gone(other)):
                delete_resource(scope, scope.lock(other.id), honour_retain=False, retire=True)
        if row.traversal_id != scope.traversal_id or row.status != states.FAILED:
            scope.release(row)
        elif row.action == states.CREATE:
            # It was created here (it had no object before) and failed.
            delete_resource(scope, row, honour_retain=False, retire=self._added(row))
        elif row.action == states.UPDATE:
            # An in-place update failed part-way: put the old properties back.
            old = row.properties_data or {}
            plugin = scope.plugin(row, old)
            row = scope.set_state(row, states.UPDATE, states.IN_PROGRESS, "rolling back")
            plugin.update(old, old)
            scope.set_state(row, states.UPDATE, states.COMPLETE, "rolled back", release=True)
        else:
            scope.release(row)
