"""Stack snapshots: take, list, show, delete and restore them.

As Heat's (heat/engine/service.py ``stack_snapshot``, ``show_snapshot``,
``delete_snapshot``, ``stack_list_snapshots``, ``stack_restore``;
heat/engine/api.py ``format_snapshot``): a snapshot is the stack's abandon
data -- template, environment, files, per resource its physical id and
plugin data -- with each resource's properties and what its plugin's
``handle_snapshot`` kept; the stack is ``SNAPSHOT_IN_PROGRESS`` while it is
taken and ``SNAPSHOT_COMPLETE`` after. A restore converges the stack to the
snapshot's template, files and environment, each resource's properties
passed through its plugin's ``handle_restore``: objects that still exist
are updated back in place, those gone since are made again, and those added
since are deleted.
"""

import logging
import uuid

from nestedflow import exceptions, states, tenancy
from nestedflow.resources import base

LOG = logging.getLogger(__name__)

#: The stack action while a snapshot is taken (Heat's).
SNAPSHOT = "SNAPSHOT"


def format_snapshot(row):
    """Heat's ``format_snapshot`` fields."""
    return {
        "id": row.id,
        "name": row.name,
        "stack_id": row.stack_id,
        "data": row.data,
        "status": row.status,
        "status_reason": row.status_reason,
        "creation_time": row.created_at.isoformat() if row.created_at else None,
    }


class Snapshots:
    def __init__(self, db, registry, stacks, store, stack_data, snapshot_store):
        self.db = db
        self.registry = registry
        self.stacks = stacks
        self.store = store
        self.stack_data = stack_data
        self.rows = snapshot_store

    def stack_snapshot(self, stack_id, name=None, context=None):
        """Take a snapshot of a settled stack; returns it (Heat's format)."""
        stack = self.stacks.live_stack(stack_id)
        if stack.status == states.IN_PROGRESS:
            raise exceptions.ActionNotAllowed(
                f"stack {stack.name} is {stack.action}_IN_PROGRESS; snapshot it once it "
                "settles")
        snapshot = self.rows.create(stack.id, name, str(uuid.uuid4()))
        # Its own traversal: nothing else starts on the stack meanwhile
        # unless it takes the stack over (then this snapshot fails).
        traversal_id = self.stacks.begin_traversal(
            stack.id, stack.current_traversal, SNAPSHOT,
            status_reason=f"Stack {SNAPSHOT} started", **tenancy.context_values(context))
        try:
            data = self.stack_data.prepare_abandon(stack.id, extra=self._resource_snapshot)
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
            LOG.info("stack %s: snapshot %s failed: %s", stack.id, snapshot.id, reason)
            self._settle_stack(stack.id, traversal_id, states.FAILED, reason)
            return format_snapshot(self.rows.settle(snapshot.id, states.FAILED, reason))
        reason = f"Stack {SNAPSHOT} completed successfully"
        row = self.rows.settle(snapshot.id, states.COMPLETE, reason, data)
        self._settle_stack(stack.id, traversal_id, states.COMPLETE, reason)
        return format_snapshot(row)

    def _settle_stack(self, stack_id, traversal_id, status, reason):
        try:
            self.db.set_stack_state(stack_id, traversal_id, SNAPSHOT, status, reason)
        except exceptions.OwnershipLost:
            LOG.info("stack %s: taken over while its snapshot was taken", stack_id)

    def _resource_snapshot(self, stack, row):
        """A resource's entry's snapshot fields: its properties and what its
        plugin keeps (``handle_snapshot``)."""
        properties = dict(row.properties_data or {})
        kept = {}
        if row.physical_id:
            data = (row.attr_data or {}).get("data") or {}
            context = base.ActionContext(
                stack_id=row.stack_id, stack_name=stack.name, resource_id=row.id,
                resource_name=row.name, type_name=row.type,
                traversal_id=stack.current_traversal, create_key="", store=self.store,
                physical_id=row.physical_id, data=dict(data))
            kept = self.registry.get(row.type)(row.name, properties, context).handle_snapshot()
        return {"properties": properties, "snapshot": kept or {}}

    def list_snapshots(self, stack_id):
        stack = self.stacks.live_stack(stack_id)
        return [format_snapshot(row) for row in self.rows.list(stack.id)]

    def show_snapshot(self, stack_id, snapshot_id):
        stack = self.stacks.live_stack(stack_id)
        return format_snapshot(self.rows.get(stack.id, snapshot_id))

    def delete_snapshot(self, stack_id, snapshot_id):
        stack = self.stacks.live_stack(stack_id)
        self.rows.delete(stack.id, snapshot_id)

    def restore_snapshot(self, stack_id, snapshot_id, context=None):
        """Start converging the stack back to the snapshot; returns the stack id."""
        stack = self.stacks.live_stack(stack_id)
        snapshot = self.rows.get(stack.id, snapshot_id)
        if snapshot.status != states.COMPLETE or not snapshot.data:
            raise exceptions.ActionNotAllowed(
                f"snapshot {snapshot_id} is {snapshot.status}: only a complete snapshot "
                "can be restored")
        data = snapshot.data
        template = _restored_template(self.registry, data)
        environment = dict(data.get("environment") or {})
        parameters = environment.pop("parameters", None) or {}
        return self.stacks.update(stack.id, template, parameters, data.get("files") or {},
                                  environment, context=context, action=states.RESTORE)


def _restored_template(registry, data):
    """The snapshot's template, each resource's properties as its plugin's
    ``handle_restore`` gives them."""
    template = dict(data.get("template") or {})
    resources = {}
    for name, definition in (template.get("resources") or {}).items():
        entry = (data.get("resources") or {}).get(name)
        definition = dict(definition)
        if entry is not None:
            try:
                plugin_cls = registry.get(entry.get("type") or definition.get("type"))
            except exceptions.NestedflowError:
                plugin_cls = None
            if plugin_cls is not None:
                restored = plugin_cls.handle_restore(definition.get("properties") or {},
                                                     entry.get("snapshot") or {})
                if restored or "properties" in definition:
                    definition["properties"] = restored
        resources[name] = definition
    template["resources"] = resources
    return template
