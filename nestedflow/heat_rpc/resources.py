"""Heat's resource, event and output methods on the Engine."""

from nestedflow.heat_rpc import faults, formats, paging
from nestedflow.heat_rpc.calls import Calls, rpc

#: Heat's resource-list filters -> formatted resource keys
#: (heat/api/openstack/v1/resources.py ``index``).
_RESOURCE_FILTERS = {
    "type": "resource_type", "resource_type": "resource_type",
    "status": "resource_status", "resource_status": "resource_status",
    "action": "resource_action", "resource_action": "resource_action",
    "name": "resource_name", "resource_name": "resource_name",
    "id": "resource_name",
    "physical_resource_id": "physical_resource_id",
}

#: Heat's event filters -> formatted event keys (heat/api/openstack/v1/events.py).
_EVENT_FILTERS = {
    "resource_status": "resource_status", "resource_action": "resource_action",
    "resource_name": "resource_name", "resource_type": "resource_type",
}


class ResourceCalls(Calls):
    """Resources, events and outputs of a stack."""

    def _stacks_by_id(self, ctxt, stack, nested_depth):
        """The stack and its nested stacks down to ``nested_depth`` by id."""
        stacks = {stack.id: stack}
        if nested_depth:
            for res in self.engine.list_resources(stack.id, nested_depth=nested_depth,
                                                  context=ctxt):
                if res.stack_id not in stacks:
                    stacks[res.stack_id] = self.engine.get_stack(res.stack_id, context=ctxt)
        return stacks

    @rpc
    def list_stack_resources(self, ctxt, stack_identity, nested_depth=0, with_detail=False,
                             filters=None):
        stack = self._stack(ctxt, stack_identity)
        depth = int(nested_depth or 0)
        stacks = self._stacks_by_id(ctxt, stack, depth)
        templates = {}
        result = []
        for res in self.engine.list_resources(stack.id, nested_depth=depth, context=ctxt):
            owner = stacks[res.stack_id]
            if owner.id not in templates:
                templates[owner.id] = formats.parsed(
                    self.engine.get_template(owner.id, context=ctxt))
            attributes = (self.engine.resource_attributes(owner.id, res.name, context=ctxt)
                          if with_detail else None)
            entry = formats.resource(res, owner, templates[owner.id] if with_detail else None,
                                     attributes)
            if not with_detail:
                entry["required_by"] = formats.required_by(templates[owner.id], res.name)
            if paging.match(entry, filters, _RESOURCE_FILTERS):
                result.append(entry)
        return result

    def _resource(self, ctxt, stack, resource_name):
        for res in self.engine.list_resources(stack.id, context=ctxt):
            if res.name == resource_name:
                return res
        raise faults.resource_not_found(resource_name, stack.name)

    @rpc
    def describe_stack_resource(self, ctxt, stack_identity, resource_name, with_attr=None):
        stack = self._stack(ctxt, stack_identity)
        res = self._resource(ctxt, stack, resource_name)
        attributes = None
        if with_attr is not False:
            attributes = formats.attributes(self.engine, stack.id, resource_name, with_attr,
                                            context=ctxt)
        template = self.engine.get_template(stack.id, context=ctxt)
        return formats.resource(res, stack, template, attributes)

    @rpc
    def describe_stack_resources(self, ctxt, stack_identity, resource_name):
        stack = self._stack(ctxt, stack_identity)
        template = self.engine.get_template(stack.id, context=ctxt)
        return [formats.resource(res, stack, template)
                for res in self.engine.list_resources(stack.id, context=ctxt)
                if resource_name in (None, res.name)]

    @rpc
    def resource_mark_unhealthy(self, ctxt, stack_identity, resource_name, mark_unhealthy,
                                resource_status_reason=None):
        stack = self._stack(ctxt, stack_identity)
        self._resource(ctxt, stack, resource_name)
        self.engine.mark_resource_unhealthy(stack.id, resource_name, bool(mark_unhealthy),
                                            resource_status_reason or "", context=ctxt)

    @rpc
    def resource_signal(self, ctxt, stack_identity, resource_name, details, sync_call=False):
        stack = self._stack(ctxt, stack_identity)
        self._resource(ctxt, stack, resource_name)
        # The engine answers Heat's checks (ResourceActionNotSupported for a
        # type without a signal handler, NotSupported while suspended or
        # deleted, InvalidBreakPointHook): translated by @rpc.
        self.engine.signal_resource(stack.id, resource_name, details=details, context=ctxt)

    # -- events --------------------------------------------------------------

    @rpc
    def list_events(self, ctxt, stack_identity, filters=None, limit=None, marker=None,
                    sort_keys=None, sort_dir=None, nested_depth=None):
        if stack_identity is None:
            raise faults.not_supported("Listing the events of every stack")
        stack = self._stack(ctxt, stack_identity)
        depth = int(nested_depth or 0)
        stacks = self._stacks_by_id(ctxt, stack, depth)
        by_name = {s.name: s for s in stacks.values()}
        types = {(res.stack_id, res.name): res
                 for res in self.engine.list_resources(stack.id, nested_depth=depth,
                                                       context=ctxt)}
        filters = dict(filters or {})
        uuid = filters.pop("uuid", None)
        events = []
        for ev in self.engine.list_events(stack.id, nested_depth=depth, context=ctxt):
            owner = by_name.get(ev.stack_name, stack)
            if uuid is not None and str(ev.id) not in [str(u) for u in
                                                       (uuid if isinstance(uuid, list)
                                                        else [uuid])]:
                continue
            res = types.get((owner.id, ev.resource_name))
            if res is None and ev.resource_name == owner.name and ev.physical_id is None:
                kind, properties = formats.STACK_EVENT_TYPE, {}
            else:
                kind = res.type if res is not None else ""
                properties = dict(res.properties) if res is not None else {}
            entry = formats.event(ev, owner, kind, properties if uuid is not None else None)
            if depth:
                entry["root_stack_id"] = formats.identity(stack)
            if paging.match(entry, filters, _EVENT_FILTERS):
                entry["_id"] = ev.id
                events.append(entry)
        events = paging.page(events, paging.EVENT_SORT_KEYS, sort_keys, sort_dir or "asc",
                             marker, limit, default_key="event_time",
                             getter=lambda item, key: item.get(key),
                             id_of=lambda item: item["_id"])
        for entry in events:
            del entry["_id"]
        return events

    # -- outputs -------------------------------------------------------------

    @rpc
    def list_outputs(self, ctxt, stack_identity):
        stack = self._stack(ctxt, stack_identity)
        template = formats.parsed(self.engine.get_template(stack.id, context=ctxt))
        return formats.output_entries(stack, template, resolve=False)

    @rpc
    def show_output(self, ctxt, stack_identity, output_key):
        stack = self._stack(ctxt, stack_identity)
        template = formats.parsed(self.engine.get_template(stack.id, context=ctxt))
        for entry in formats.output_entries(stack, template):
            if entry["output_key"] == output_key:
                return entry
        raise faults.not_found(f"Specified output key {output_key} not found.")
