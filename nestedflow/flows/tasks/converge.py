"""Bringing a resource to an update's template (or a rollback's)."""

from nestedflow import exceptions, states
from nestedflow.db import models
from nestedflow.flows.tasks.base import (
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

    def _current(self):
        """Lock the current version: an older traversal may have replaced ours."""
        scope = self.scope
        row = scope.lock(self.row_id)
        while row.replaced_by is not None:
            scope.release(row)
            row = scope.lock(row.replaced_by)
        return row

    def execute(self, traversal, **inputs):
        scope = self.scope
        row = self._current()
        if row.traversal_id == scope.traversal_id and row.status == states.COMPLETE and (
            row.action in (states.UPDATE, states.CREATE)
        ):
            # Re-run after a crash: the journal may not have kept the result,
            # so what the revert must undo comes from the row.
            return {**output_of(scope.release(row)), "undo": stored_undo(row, scope)}
        properties = self.resolve(inputs, row)
        if self._decide(row, properties) == changes.CREATE:
            undo = {"created": row.id}
            # An older traversal's cleanup may have retired the row while this
            # traversal (whose template has the resource) was starting: the
            # object made now is the current version again.
            row = self.create_on(row, properties, type_name=self._new_type(), release=True,
                                 undo=undo, revive=not row.current)
            return {**output_of(row), "undo": undo}
        try:
            if external.unchanged_on_update(
                    row.name, row.type, (row.attr_data or {}).get("data"),
                    scope.definition.external_id(self.resource_name)):
                properties = row.properties_data or {}
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
        old = row.properties_data or {}
        plugin = scope.plugin(row, old)
        if change == changes.UNCHANGED:
            # Unchanged: no plugin action, but dependents still get its data.
            data = dict(row.attr_data or {})
            data.pop(UNDO, None)
            data["attrs"] = self.attributes(plugin)
            row = scope.write(row, release=True, attr_data=data,
                              traversal_id=scope.traversal_id)
            return {**output_of(row), "undo": None}
        row = scope.set_state(row, states.UPDATE, states.IN_PROGRESS, "state changed",
                              traversal_id=scope.traversal_id)
        try:
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
        data = {"ref": plugin.reference_id(), "attrs": self.attributes(plugin),
                "data": plugin.stored_data(),
                "fingerprint": self.fingerprint(row.type, properties),
                UNDO: {"traversal": scope.traversal_id, **undo}}
        row = scope.set_state(row, states.UPDATE, states.COMPLETE, "state changed", release=True,
                              properties_data=properties, attr_data=data,
                              physical_id=new_id or row.physical_id)
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
        requires = [value["row"] for value in inputs_by_name(inputs).values()
                    if isinstance(value, dict) and value.get("row")]
        new = scope.db.add_replacement(row, scope.holder, scope.stack.raw_template_id,
                                       requires, type_name=self._new_type(),
                                       traversal_id=scope.traversal_id)
        scope.mark_held(new.id, True)
        undo = {"replaced": row.id, "replacement": new.id}
        new = self.create_on(new, properties, undo=undo)
        scope.db.swap_current(row, new, scope.holder)
        scope.release(row)
        new = scope.release(new)
        return {**output_of(new), "undo": undo}

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
