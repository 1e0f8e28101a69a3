"""``OS::Heat::AutoScalingGroup`` and ``OS::Heat::ScalingPolicy`` as Heat's.

Followed: heat/engine/resources/openstack/heat/autoscaling_group.py and
instance_group.py (members as a nested stack, ``_create_template``,
``_replace`` in batches with pauses, ``resize``), heat/engine/resources/
aws/autoscaling/autoscaling_group.py (``validate``, ``handle_update``,
``adjust``), heat/scaling/scalingutil.py (``calculate_new_capacity``),
rolling_update.py (``next_batch``), template.py (``member_definitions``:
the oldest members are replaced first and removed first), cooldown.py, and
heat/engine/resources/openstack/heat/scaling_policy.py.

The members are the resources of the group's child stack, in the order
they were added (its template's order): scaling down keeps the newest.
New members are named from what asked for them (the traversal, or the
signal), so an action re-run after a crash names them the same and its
child stack's own traversal -- idempotent per member -- creates each once.

A policy's signal (``Engine.signal_resource``) resizes the group as Heat's
``adjust``: the group must be COMPLETE, its child stack not already
scaling, and its cooldown over; the child stack is then updated to the new
size (its own traversal, run by any conductor), and the group's cooldown
recorded. The group resource itself keeps its state, as in Heat.
"""

import hashlib
import math

from nestedflow import exceptions
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base, nested

ADJUSTMENT_TYPES = (EXACT, CHANGE, PERCENT) = (
    "exact_capacity", "change_in_capacity", "percent_change_in_capacity")
HOT_VERSION = "2015-04-30"


def calculate_new_capacity(current, adjustment, adjustment_type, min_step, minimum, maximum):
    """heat/scaling/scalingutil.py calculate_new_capacity."""
    if adjustment_type == CHANGE:
        new = current + adjustment
    elif adjustment_type == EXACT:
        new = adjustment
    else:
        delta = current * adjustment / 100.0
        if math.fabs(delta) < 1.0:
            rounded = int(math.ceil(delta) if delta > 0.0 else math.floor(delta))
        else:
            rounded = int(math.floor(delta) if delta > 0.0 else math.ceil(delta))
        if min_step and min_step > abs(rounded):
            rounded = min_step if rounded > 0 else -min_step
        new = current + rounded
    return max(minimum, min(maximum, int(new)))


def next_batch(target, current, up_to_date, batch_size, min_in_service):
    """heat/scaling/rolling_update.py next_batch."""
    efft_min = min(min_in_service, target, current)
    efft_batch = min(batch_size, max(target - up_to_date, 0))
    return efft_batch + max(min(current, target - efft_batch), efft_min), efft_batch


def batches(target, current, batch_size, min_in_service):
    """InstanceGroup._get_batches: (size after the batch, members it updates)."""
    updated = 0
    while not (updated >= current == target):
        size, count = next_batch(target, current, updated, batch_size, min_in_service)
        yield size, count
        current, updated = size, updated + count


def member_definitions(old, new_definition, size, num_new, new_name):
    """heat/scaling/template.py member_definitions: ``old`` oldest first."""
    old = old[-size:] if size else []
    num_replace = num_new - (size - len(old))
    result = []
    for index in range(size):
        if index < len(old):
            name, definition = old[index]
            if definition != new_definition and num_replace > 0:
                num_replace -= 1
                result.append((name, new_definition))
            else:
                result.append((name, definition))
        else:
            result.append((new_name(), new_definition))
    return result


class AutoScalingGroup(nested.NestedStackResource):
    """A group of identical members in a nested stack: sized by ``desired_capacity``
    (within ``min_size``/``max_size``), resized by its policies' signals, its
    members replaced in batches when their definition changes."""

    properties_schema = {
        "resource": Property(Types.MAP, "Definition of the members, in HOT format.",
                             required=True, update_allowed=True),
        "max_size": Property(Types.INTEGER, "Maximum number of members.", required=True,
                             update_allowed=True, constraints=[constraints.Range(min=0)]),
        "min_size": Property(Types.INTEGER, "Minimum number of members.", required=True,
                             update_allowed=True, constraints=[constraints.Range(min=0)]),
        "cooldown": Property(Types.INTEGER, "Cooldown period, in seconds.",
                             update_allowed=True),
        "desired_capacity": Property(Types.INTEGER, "Desired initial number of members.",
                                     update_allowed=True),
        "rolling_updates": Property(
            Types.MAP, "Policy for rolling updates of the group.", update_allowed=True,
            default={"min_in_service": 0, "max_batch_size": 1, "pause_time": 0},
            schema={
                "min_in_service": Property(Types.INTEGER, default=0,
                                           constraints=[constraints.Range(min=0)]),
                "max_batch_size": Property(Types.INTEGER, default=1,
                                           constraints=[constraints.Range(min=1)]),
                "pause_time": Property(Types.NUMBER, default=0,
                                       constraints=[constraints.Range(min=0)]),
            }),
    }
    attributes_schema = {
        "outputs": Attribute("Member name -> the member's attribute (get_attr path).",
                             Types.MAP),
        "outputs_list": Attribute("The members' attribute, oldest first (get_attr path).",
                                  Types.LIST),
        "current_size": Attribute("The current number of members.", Types.INTEGER),
        "refs": Attribute("The members' reference ids, oldest first.", Types.LIST),
        "refs_map": Attribute("Member name -> reference id.", Types.MAP),
    }

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """AutoScalingGroup.validate: sizes consistent; the member type exists."""
        low, high = properties.get("min_size"), properties.get("max_size")
        desired = properties.get("desired_capacity")
        if isinstance(low, int) and isinstance(high, int):
            if high < low:
                raise exceptions.StackValidationFailed(
                    "MinSize can not be greater than MaxSize", path=f"{path}.max_size")
            if isinstance(desired, int) and not low <= desired <= high:
                raise exceptions.StackValidationFailed(
                    "DesiredCapacity must be between MinSize and MaxSize",
                    path=f"{path}.desired_capacity")
        member_type = (properties.get("resource") or {}).get("type")
        if not isinstance(member_type, str):
            raise exceptions.StackValidationFailed(
                "the member definition needs a type", path=f"{path}.resource.type")
        try:
            type_lookup(member_type)
        except exceptions.UnknownResourceType as error:
            raise exceptions.UnknownResourceType(
                member_type, path=f"{path}.resource.type") from error

    @classmethod
    def fingerprint(cls, properties, files, type_name):
        member = (properties.get("resource") or {}).get("type")
        return nested.digest(files.get(member)) if member in (files or {}) else None

    # -- the child template ------------------------------------------------

    def member_name(self, seed, taken):
        counter = [0]

        def new_name():
            while True:
                counter[0] += 1
                digest = hashlib.sha256(f"{seed}:{counter[0]}".encode()).hexdigest()
                name = digest[:12]
                if name not in taken:
                    taken.add(name)
                    return name
        return new_name

    def members(self, child_id=None):
        """(name, definition) of the current members, oldest first."""
        child_id = child_id or self.physical_id
        child = self._children().get(child_id) if child_id else None
        if child is None:
            return []
        template = self._children().template_of(child)
        return list((template.get("resources") or {}).items())

    def build(self, members, files):
        """The child template holding ``members`` and the group's outputs
        (Heat's _nested_output_defns: refs_map, and each member attribute)."""
        names = [name for name, _ in members]
        outputs = {"refs_map": {"value": {name: {"get_resource": name} for name in names}}}
        if members:
            for attr in self.member_attributes(members[-1][1]["type"], files):
                outputs[f"outputs.{attr}"] = {
                    "value": {name: {"get_attr": [name, attr]} for name in names}}
        return {"heat_template_version": HOT_VERSION, "resources": dict(members),
                "outputs": outputs}

    def definition(self, properties):
        return dict(properties["resource"])

    def child_template(self, properties, files):
        size = properties.get("desired_capacity")
        if size is None:
            size = properties.get("min_size") or 0
        new_name = self.member_name(self.context.create_key, set())
        members = member_definitions([], self.definition(properties), size, 0, new_name)
        return self.build(members, files), {}, files

    def _apply(self, members, files):
        self._run(self._children().update, self.physical_id, self.build(members, files), {},
                  files)

    def update(self, new_properties, old_properties):
        """AutoScalingGroup.handle_update: a changed member definition is
        rolled out in batches (rolling_updates), then the group is resized
        to desired_capacity (or kept at its size) within the new bounds."""
        children = self._children()
        files = children.parent_files()
        members = self.members()
        taken = {name for name, _ in members}
        new_name = self.member_name(f"{self.context.create_key}:{self.context.traversal_id}", taken)
        definition = self.definition(new_properties)
        if definition != self.definition(old_properties):
            policy = new_properties.get("rolling_updates") or {}
            capacity = len(members)
            target = min(new_properties.get("desired_capacity") or capacity, capacity)
            plan = list(batches(target, capacity, policy.get("max_batch_size") or 1,
                                policy.get("min_in_service") or 0))
            for index, (size, count) in enumerate(plan):
                members = member_definitions(members, definition, size, count, new_name)
                self._apply(members, files)
                if index < len(plan) - 1 and policy.get("pause_time"):
                    self.context.sleep(float(policy["pause_time"]))
        current = len(members)
        desired = new_properties.get("desired_capacity") or current
        size = calculate_new_capacity(current, desired, EXACT, None,
                                      new_properties["min_size"], new_properties["max_size"])
        resized = member_definitions(members, definition, size, 0, new_name)
        if resized != members or not self.members():
            self._apply(resized, files)
        self.properties = new_properties

    def get_attribute(self, name):
        outputs = self.outputs()
        refs = outputs.get("refs_map") or {}
        names = list(refs)
        if name == "current_size":
            return len(names)
        if name == "refs":
            return [refs[n] for n in names]
        if name == "refs_map":
            return dict(refs)
        per_attr = {key[len("outputs."):]: value for key, value in outputs.items()
                    if key.startswith("outputs.")}
        # get_attr [group, outputs, attr]: the path picks the attribute.
        if name == "outputs":
            return per_attr
        if name == "outputs_list":
            return {attr: [values.get(n) for n in names] for attr, values in per_attr.items()}
        if name.startswith("resource."):
            _, index, *rest = name.split(".", 2)
            member = names[int(index)] if index.isdigit() and int(index) < len(names) else None
            if member is None:
                return None
            return (per_attr.get(rest[0]) or {}).get(member) if rest else refs.get(member)
        return None


class ScalingPolicy(base.DatabaseOnlyResource):
    """A scaling policy: its signal (``signal_url``) resizes its group by
    ``scaling_adjustment`` of ``adjustment_type``, outside the cooldown."""

    id_prefix = "policy:"
    properties_schema = {
        "auto_scaling_group_id": Property(Types.STRING, "AutoScaling group ID to apply "
                                          "policy to.", required=True),
        "scaling_adjustment": Property(Types.NUMBER, "Size of adjustment.", required=True,
                                       update_allowed=True),
        "adjustment_type": Property(Types.STRING, "Type of adjustment (absolute or "
                                    "percentage).", required=True, update_allowed=True,
                                    constraints=[constraints.AllowedValues(
                                        list(ADJUSTMENT_TYPES))]),
        "cooldown": Property(Types.NUMBER, "Cooldown period, in seconds.",
                             update_allowed=True),
        "min_adjustment_step": Property(
            Types.INTEGER, "Minimum number of members added or removed (only with "
            "percent_change_in_capacity).", update_allowed=True,
            constraints=[constraints.Range(min=0)]),
    }
    attributes_schema = {
        "alarm_url": Attribute("A signed url to handle the alarm.", Types.STRING),
        "signal_url": Attribute("A url to handle the alarm using native API.", Types.STRING),
    }

    @classmethod
    def validate_nested(cls, properties, type_lookup, path):
        """AutoScalingPolicy._validate_min_adjustment_step."""
        if properties.get("min_adjustment_step") is not None and (
                properties.get("adjustment_type") != PERCENT):
            raise exceptions.StackValidationFailed(
                f"min_adjustment_step property should only be specified for "
                f"adjustment_type with value {PERCENT}.",
                path=f"{path}.min_adjustment_step")

    def get_attribute(self, name):
        from nestedflow.resources.wait_condition import signal_url

        if name in ("alarm_url", "signal_url") and self.physical_id:
            return signal_url(self.context)
        return None

    def handle_signal(self, details=None):
        """AutoScalingPolicy.handle_signal: adjust the group (any alarm state)."""
        scaler = self.context.signals.scaler
        if scaler is None:
            raise exceptions.ResourceActionNotSupported("signal", self.name,
                                                        self.context.type_name)
        props = self.properties
        return scaler(self.name, props["auto_scaling_group_id"], props["scaling_adjustment"],
                      props["adjustment_type"], props.get("min_adjustment_step"),
                      props.get("cooldown"))
