"""What a mixed update writes, resource by resource.

Heat's convergence records an event for each state a resource goes
through (``Resource._add_event`` on every ``state_set``); a resource the
update leaves as it is goes through none. The writes themselves are
merged where nothing outside the database happens between them: a kept
resource's data is written with its lock, an in-place update's
IN_PROGRESS too, and the cleanup of a row its converge left current does
nothing (``atomic_key`` counts every write of a row).
"""

import pytest

pytestmark = pytest.mark.functional

TEMPLATE = "2018-08-31"


def _template(version):
    # kept: unchanged; inplace: a new value; replaced: a new update_replace_value.
    return {"heat_template_version": TEMPLATE, "resources": {
        "kept": {"type": "OS::Heat::TestResource", "properties": {"value": "k"}},
        "inplace": {"type": "OS::Heat::TestResource",
                    "properties": {"value": f"v{version}"}},
        "replaced": {"type": "OS::Heat::TestResource",
                     "properties": {"value": "r", "update_replace_value": str(version)}},
        "reader": {"type": "OS::Heat::TestResource",
                   "properties": {"value": {"get_attr": ["kept", "output"]}}},
    }}


def _rows(engine, stack_id):
    return {(row.name, row.current): row for row in engine.db.list_all_resources(stack_id)}


def test_mixed_update_events_and_writes(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _template(0)).id, timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    before = _rows(engine, stack.id)
    seen = len(engine.db.list_events(stack.id))
    stack = engine.wait(engine.update_stack(stack.id, _template(1)).id, timeout=60)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.status_reason
    events = [(e.resource_name, e.resource_id, e.action, e.status)
              for e in engine.db.list_events(stack.id)[seen:] if e.resource_name]
    after = _rows(engine, stack.id)
    old, new = before[("replaced", True)], after[("replaced", True)]
    assert new.id != old.id and after[("replaced", False)].id == old.id
    by_resource = {}
    for name, resource_id, action, status in events:
        by_resource.setdefault((name, resource_id), []).append((action, status))
    assert by_resource == {
        ("inplace", before[("inplace", True)].id): [("UPDATE", "IN_PROGRESS"),
                                                    ("UPDATE", "COMPLETE")],
        ("replaced", new.id): [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")],
        ("replaced", old.id): [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE")],
    }
    # The kept resources: the lock and its write, released together; no
    # cleanup write. The in-place one: lock with IN_PROGRESS, COMPLETE.
    for name, writes in (("kept", 2), ("reader", 2), ("inplace", 3)):
        row = after[(name, True)]
        assert row.id == before[(name, True)].id
        assert row.atomic_key - before[(name, True)].atomic_key == writes, name
        assert row.engine_id is None and row.traversal_id == new.traversal_id
    assert after[("inplace", True)].properties_data["value"] == "v1"
    # Dependents still get the kept resource's data.
    assert after[("reader", True)].properties_data["value"] == (
        after[("kept", True)].attr_data["attrs"]["output"])
    live = {o.resource_id: o.resource_name for o in engine.store.live(stack.id)}
    assert live == {after[(name, True)].id: name
                    for name in ("kept", "inplace", "replaced", "reader")}
