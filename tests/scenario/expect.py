"""What a settled stack must look like: reality checked against its template.

``problems(engine, stack_id)`` compares the live physical objects (the
shared store the test resource types create in) with the template the stack
reports as current, resolving ``get_resource``/``get_attr`` from the *live
objects*, not from what the engine recorded -- so the engine is checked
against reality rather than against itself.
"""

from nestedflow.resources import base
from nestedflow.stacks.definition import load_definition
from nestedflow.template.functions import select_path

SETTLED_OK = {("CREATE", "COMPLETE"), ("UPDATE", "COMPLETE"), ("ROLLBACK", "COMPLETE"),
              ("SUSPEND", "COMPLETE"), ("RESUME", "COMPLETE"), ("CHECK", "COMPLETE")}
LIVE_ACTIONS = {"CREATE", "UPDATE", "SUSPEND", "RESUME", "CHECK"}


def _stores_objects(plugin_cls):
    return issubclass(plugin_cls, base.StoredObjectResource)


def _plugin(engine, stack, row, obj):
    cls = engine.registry.get(row.type)
    context = base.ActionContext(
        stack_id=stack.id, stack_name=stack.name, resource_id=row.id, resource_name=row.name,
        type_name=row.type, traversal_id="check", create_key="check", store=engine.store,
        physical_id=obj.id if obj is not None else row.physical_id,
        data=dict(obj.data or {}) if obj is not None else {},
    )
    properties = dict(obj.properties) if obj is not None else dict(row.properties_data or {})
    return cls(row.name, properties, context)


def problems(engine, stack_id, template_id=None):
    """Why the stack's physical objects do not match its current template ([] if they do).

    Checks: one current row per template resource and none for other names;
    exactly one live object per object-storing resource, recorded on that
    row; no live object anywhere else in the stack (nothing leaked); every
    object's properties equal the template's, with get_resource/get_attr
    resolved from the live objects; the stack's outputs likewise; no
    resource lock left held.
    """
    db = engine.db
    stack = db.get_stack(stack_id)
    found = []
    if (stack.action, stack.status) not in SETTLED_OK:
        found.append(f"stack is {stack.action}_{stack.status}: {stack.status_reason}")
    if template_id is not None and stack.raw_template_id != template_id:
        found.append(f"stack's current template is #{stack.raw_template_id}, "
                     f"expected #{template_id}")
    definition = load_definition(engine.db, engine.runtime.registry, stack, stack.raw_template_id)
    rows = db.list_all_resources(stack_id)
    live = {obj.id: obj for obj in engine.store.live(stack_id)}
    current = {}
    for row in rows:
        if row.engine_id:
            found.append(f"{row.name}#{row.id}: lock still held by {row.engine_id}")
        if not row.current:
            continue
        if row.name in current:
            found.append(f"{row.name}: two current rows #{current[row.name].id} and #{row.id}")
        current[row.name] = row
    for name in sorted(set(current) - set(definition.resources)):
        found.append(f"{name}: current row #{current[name].id} but not in the template")
    objects = {}
    for name, res in definition.resources.items():
        row = current.get(name)
        if row is None:
            found.append(f"{name}: no current row")
            continue
        if row.type != res.type:
            found.append(f"{name}: row type {row.type}, template type {res.type}")
        if row.status != "COMPLETE" or row.action not in LIVE_ACTIONS:
            found.append(f"{name}: row #{row.id} is {row.action}_{row.status} "
                         f"({row.status_reason})")
        if _stores_objects(engine.registry.get(res.type)):
            mine = [obj for obj in live.values() if obj.resource_name == name]
            if len(mine) != 1:
                found.append(f"{name}: {len(mine)} live objects "
                             f"{[(o.id[:8], o.properties.get('value')) for o in mine]}")
            obj = live.get(row.physical_id)
            if obj is None:
                found.append(f"{name}: row #{row.id}'s object {row.physical_id} is not live")
            objects[name] = (row, obj)
        else:
            if row.physical_id is None:
                found.append(f"{name}: no physical id")
            objects[name] = (row, None)
    owned = {row.physical_id for row, obj in objects.values() if obj is not None}
    for obj in live.values():
        if obj.id not in owned:
            found.append(f"leaked: {obj.resource_name} object {obj.id[:8]} "
                         f"(row #{obj.resource_id}) value={obj.properties.get('value')!r}")
    plugins = {name: _plugin(engine, stack, row, obj) for name, (row, obj) in objects.items()}

    def get_resource(name):
        return plugins[name].reference_id()

    def get_attr(name, attr, path):
        return select_path(plugins[name].get_attribute(attr), path)

    for name, (row, obj) in objects.items():
        if obj is None:
            continue
        try:
            expected = definition.resolve_properties(name, get_resource=get_resource,
                                                     get_attr=get_attr)
        except Exception as error:  # a dependency is missing: reported above
            found.append(f"{name}: cannot resolve expected properties: {error}")
            continue
        if obj.properties != expected:
            diff = {k: (obj.properties.get(k), expected.get(k))
                    for k in set(expected) | set(obj.properties)
                    if obj.properties.get(k) != expected.get(k)}
            found.append(f"{name}: properties differ (live, expected): {diff}")
        if row.properties_data != obj.properties:
            found.append(f"{name}: row #{row.id} records {row.properties_data}, "
                         f"object has {obj.properties}")
    if not any("cannot resolve" in p for p in found) and len(plugins) == len(
            definition.resources):
        outputs = definition.resolve_outputs(get_resource=get_resource, get_attr=get_attr)
        if (stack.outputs or {}) != outputs and stack.action != "ROLLBACK":
            found.append(f"outputs {stack.outputs} != expected {outputs}")
    return found


def tracked_problems(engine, stack_id):
    """The weaker invariant of a FAILED stack: every live object is owned by a
    row that may still be cleaned up, at most one current row per name, no
    lock held and no object shared by two rows."""
    db = engine.db
    rows = db.list_all_resources(stack_id)
    found = []
    by_physical = {}
    current_names = {}
    for row in rows:
        if row.engine_id:
            found.append(f"{row.name}#{row.id}: lock still held by {row.engine_id}")
        if row.physical_id and (row.action, row.status) != ("DELETE", "COMPLETE"):
            if row.physical_id in by_physical:
                found.append(f"{row.name}: object {row.physical_id} on rows "
                             f"#{by_physical[row.physical_id]} and #{row.id}")
            by_physical[row.physical_id] = row.id
        if row.current:
            if row.name in current_names:
                found.append(f"{row.name}: two current rows")
            current_names[row.name] = row.id
    row_ids = {row.id: row for row in rows}
    for obj in engine.store.live(stack_id):
        owner = row_ids.get(obj.resource_id)
        if owner is None or (owner.action, owner.status) == ("DELETE", "COMPLETE") or (
                owner.physical_id not in (None, obj.id)):
            found.append(f"untracked: {obj.resource_name} object {obj.id[:8]} "
                         f"(row #{obj.resource_id})")
    return found


def deleted_problems(engine, stack_id):
    """After DELETE_COMPLETE: nothing left but objects with the Retain policy."""
    stack = engine.db.get_stack(stack_id)
    found = []
    if (stack.action, stack.status) != ("DELETE", "COMPLETE"):
        found.append(f"stack is {stack.action}_{stack.status}: {stack.status_reason}")
    retained = {row.physical_id for row in engine.db.list_all_resources(stack_id)
                if row.deletion_policy == "Retain"}
    for obj in engine.store.live(stack_id):
        if obj.id not in retained:
            found.append(f"left after delete: {obj.resource_name} object {obj.id[:8]}")
    return found
