"""A scaling policy's signal resizing its group (Heat's
``AutoScalingGroup.adjust``, heat/engine/resources/aws/autoscaling/
autoscaling_group.py, with heat/scaling/cooldown.py's checks).

Done in the process that received the signal, under the group resource's
lock (taken as ``mark_resource_unhealthy`` takes it), so no traversal acts
on the group meanwhile: the group must be COMPLETE, its child stack not
already changing ("scaling in progress"), and its cooldown over. The new
size is then given to the child stack as an update -- a traversal of its
own, run by any conductor, creating each new member once -- and the
cooldown is recorded with the group's signals, keyed by the signal, so the
same signal delivered again changes nothing.
"""

import datetime

from nestedflow import exceptions, states
from nestedflow.db import models
from nestedflow.db.owners import OwnerToken
from nestedflow.resources import autoscaling, base
from nestedflow.template import environment


class _Children:
    """What the group plugin asks of its child stack, outside a traversal."""

    def __init__(self, engine, stack):
        self._engine = engine
        self._stack = stack
        self.registry = engine.registry

    def _template(self):
        return self._engine.db.get_template(self._stack.raw_template_id)

    def parent_files(self):
        return self._template().files or {}

    def child_environment(self, resource_name):
        return environment.child_environment(self._template().environment, resource_name)

    def resolve_type(self, type_name, resource_name):
        registry = self.child_environment(resource_name)["resource_registry"]
        return environment.resolve_type(registry, type_name)

    def get(self, child_id):
        try:
            return self._engine.db.get_stack(child_id)
        except exceptions.StackNotFound:
            return None

    def template_of(self, child):
        return self._engine.db.get_template(child.raw_template_id).template


def _scaling_records(db, row):
    return [(key, details) for key, details in db.list_signals(row.id)
            if key.startswith("scaling:")]


def scaler(engine, stack, key):
    """The ``SignalBox.scaler`` of a signal to a policy of ``stack``."""

    def scale(policy, group_ref, adjustment, adjustment_type, min_step, cooldown):
        db = engine.db
        row = next((r for r in db.list_resources(stack.id)
                    if group_ref in ((r.attr_data or {}).get("ref"), r.physical_id, r.name)),
                   None)
        if row is None or not issubclass(engine.registry.get(row.type),
                                         autoscaling.AutoScalingGroup):
            raise ValueError(f'Alarm {policy} could not find scaling group named "{group_ref}"')
        if any(k == f"scaling:{key}" for k, _ in _scaling_records(db, row)):
            raise exceptions.NoActionRequired(f"{row.name}: signal already applied")
        holder = OwnerToken.holder("scaling")
        try:
            row = db.lock_resource(row.id, holder)
        except exceptions.ResourceLocked as error:
            raise exceptions.NoActionRequired(f"{row.name} is being acted on") from error
        try:
            return _adjust(engine, stack, row, key, adjustment, adjustment_type, min_step,
                           cooldown)
        finally:
            db.release_lock(row.id, holder)

    return scale


def _adjust(engine, stack, row, key, adjustment, adjustment_type, min_step, cooldown):
    db = engine.db
    if row.status != states.COMPLETE or not row.physical_id:
        raise exceptions.NoActionRequired(f"{row.name} is not COMPLETE")
    children = _Children(engine, stack)
    child = children.get(row.physical_id)
    if child is None or child.status == states.IN_PROGRESS:
        raise exceptions.NoActionRequired(f"{row.name}: due to scaling activity")
    props = dict(row.properties_data or {})
    if cooldown is None:
        cooldown = props.get("cooldown")
    now = models.utcnow()
    records = _scaling_records(db, row)
    if records and now.isoformat() < records[-1][1]["cooldown_end"]:
        raise exceptions.NoActionRequired(f"{row.name}: due to cooldown, cooldown {cooldown}")
    context = base.ActionContext(
        stack_id=stack.id, stack_name=stack.name, resource_id=row.id, resource_name=row.name,
        type_name=row.type, traversal_id=row.traversal_id or "", create_key=key,
        store=engine.store, physical_id=row.physical_id,
        data=dict((row.attr_data or {}).get("data") or {}), children=children)
    group = engine.registry.get(row.type)(row.name, props, context)
    members = group.members()
    size = autoscaling.calculate_new_capacity(len(members), adjustment, adjustment_type,
                                              min_step, props["min_size"], props["max_size"])
    if size == len(members):
        raise exceptions.NoActionRequired(f"{row.name}: no change in capacity")
    new_name = group.member_name(key, {name for name, _ in members})
    resized = autoscaling.member_definitions(members, group.definition(props), size, 0,
                                             new_name)
    files = children.parent_files()
    engine.stacks.update(child.id, group.build(resized, files), {}, files,
                         environment=children.child_environment(row.name))
    end = now + datetime.timedelta(seconds=max(0, cooldown or 0))
    reason = f"{adjustment_type} : {adjustment}"
    db.add_signal(row, f"scaling:{key}", {"cooldown_end": end.isoformat(), "reason": reason,
                                          "from": len(members), "to": size})
    return reason
