"""Snapshot, change, restore: the snapshot's properties and objects come back.

As Heat's stack snapshots (heat/engine/service.py stack_snapshot /
stack_restore, heat/engine/api.py format_snapshot) and ``deletion_policy:
Snapshot`` (heat/engine/resource.py: a snapshot is kept, then the object
deleted).
"""

import pytest
import sqlalchemy as sa

from nestedflow import exceptions
from nestedflow.db import models
from nestedflow.resources.registry import ResourceRegistry
from nestedflow.resources.test_resource import TestResource
from nestedflow.testing import physical_objects

TR = "OS::Heat::TestResource"


def template(value, extra=False, word_length=12):
    resources = {
        "a": {"type": TR, "properties": {"value": value}},
        "b": {"type": TR, "properties": {"value": {"get_attr": ["a", "output"]}}},
        "word": {"type": "OS::Heat::RandomString", "properties": {"length": word_length}},
    }
    if extra:
        resources["extra"] = {"type": TR, "properties": {"value": "new"}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def objects(engine, stack_id):
    return {o.resource_name: (o.id, o.properties.get("value"), (o.data or {}).get("value"))
            for o in physical_objects(engine, stack_id)}


def test_snapshot_then_restore_after_a_change(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, template("one")).id, timeout=60)
    before = objects(engine, stack.id)
    word = stack.outputs  # no outputs; the RandomString's value is in its object
    snapshot = engine.stack_snapshot(stack.id, "first")
    assert {"id", "name", "stack_id", "data", "status", "status_reason",
            "creation_time"} <= set(snapshot)
    assert (snapshot["name"], snapshot["status"]) == ("first", "COMPLETE")
    assert engine.get_stack(stack.id).stack_status == "SNAPSHOT_COMPLETE"
    entry = snapshot["data"]["resources"]["a"]
    assert entry["resource_id"] == before["a"][0]
    assert entry["properties"]["value"] == "one"
    assert entry["snapshot"]["properties"]["value"] == "one"  # handle_snapshot

    # The change: in place (a, b), an added resource, a replaced one (word).
    changed = engine.wait(engine.update_stack(stack.id, template("two", extra=True,
                                                                 word_length=20)).id,
                          timeout=60)
    assert changed.stack_status == "UPDATE_COMPLETE", changed.status_reason
    assert objects(engine, stack.id)["a"][1] == "two"
    assert "extra" in objects(engine, stack.id)

    assert [s["id"] for s in engine.list_snapshots(stack.id)] == [snapshot["id"]]
    assert engine.show_snapshot(stack.id, snapshot["id"])["data"] == snapshot["data"]
    restored = engine.wait(engine.restore_snapshot(stack.id, snapshot["id"]).id, timeout=60)
    # Heat's restore is an update under its own action (heat/engine/stack.py
    # Stack.restore: self.update(newstack, action=self.RESTORE)).
    assert restored.stack_status == "RESTORE_COMPLETE", restored.status_reason
    assert restored.status_reason == "Stack RESTORE completed successfully"
    after = objects(engine, stack.id)
    # a and b: the same objects with the snapshot's properties; extra gone.
    assert {k: after[k] for k in ("a", "b")} == {k: before[k] for k in ("a", "b")}
    assert "extra" not in after
    props = {r.name: r.properties for r in engine.list_resources(stack.id)}
    assert props["a"]["value"] == "one" and props["word"]["length"] == 12
    assert word == {}
    assert engine.get_template(stack.id)["resources"]["a"]["properties"] == {"value": "one"}

    engine.delete_snapshot(stack.id, snapshot["id"])
    assert engine.list_snapshots(stack.id) == []
    with pytest.raises(exceptions.SnapshotNotFound):
        engine.show_snapshot(stack.id, snapshot["id"])


def test_a_snapshot_of_a_busy_stack_is_refused(sqlite_engine, stack_name):
    engine = sqlite_engine
    slow = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": TR, "properties": {"wait_secs": 1}}}}
    stack = engine.create_stack(stack_name, slow)
    with pytest.raises(exceptions.ActionNotAllowed, match="IN_PROGRESS"):
        engine.stack_snapshot(stack.id)
    engine.wait(stack.id, timeout=60)
    with pytest.raises(exceptions.SnapshotNotFound):
        engine.restore_snapshot(stack.id, "nope")


class SnapshottingResource(TestResource):
    """A type with Heat's snapshot delete (the built-ins have none)."""

    handle_snapshot_delete = TestResource.keep_snapshot_and_delete


def test_deletion_policy_snapshot_keeps_a_copy(make_engine, sqlite_url, stack_name):
    registry = ResourceRegistry.for_testing({"Test::Snapshotting": SnapshottingResource,
                                             TR: TestResource})
    engine = make_engine(sqlite_url, registry=registry)
    tmpl = {"heat_template_version": "2018-08-31", "resources": {
        "kept": {"type": "Test::Snapshotting", "deletion_policy": "Snapshot",
                 "properties": {"value": "v"}},
        "gone": {"type": TR}}}
    stack = engine.wait(engine.create_stack(stack_name, tmpl).id, timeout=60)
    original = objects(engine, stack.id)["kept"][0]
    engine.wait(engine.delete_stack(stack.id).id, timeout=60)
    left = [o for o in physical_objects(engine, stack.id)]
    assert [(o.resource_name, o.type, o.properties["value"], o.data["of"]) for o in left] == [
        ("kept", "Test::Snapshotting::Snapshot", "v", original)]
    # A type without a snapshot delete refuses the policy (Heat).
    tmpl["resources"]["kept"]["type"] = TR
    with pytest.raises(exceptions.StackValidationFailed, match="Snapshot is not supported"):
        engine.create_stack(f"{stack_name}-2", tmpl)


def test_snapshot_rows_survive_in_their_table(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, template("x")).id, timeout=60)
    taken = engine.stack_snapshot(stack.id)
    with engine.db.reader() as session:
        stored = session.get(models.StackSnapshot, taken["id"])
        count = session.scalar(sa.select(sa.func.count()).select_from(models.StackSnapshot)
                               .where(models.StackSnapshot.stack_id == stack.id))
    assert (stored.status, count) == ("COMPLETE", 1)
