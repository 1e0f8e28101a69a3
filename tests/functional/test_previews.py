"""Previews answer what the create or update then does, and store nothing.

Formats as Heat's (heat/engine/service.py preview_stack and
preview_update_stack, heat/engine/api.py format_stack_preview); the update
preview asks the converge task's own decision
(nestedflow.stacks.changes.decide).
"""

import pytest
import sqlalchemy as sa
import yaml

from nestedflow import exceptions
from nestedflow.db import models

TR = "OS::Heat::TestResource"


def tmpl(**resources):
    return {"heat_template_version": "2018-08-31", "resources": resources}


OLD = tmpl(
    keep={"type": TR, "properties": {"value": "k"}},
    inplace={"type": TR, "properties": {"value": "a"}},
    repl={"type": TR, "properties": {"value": "r", "update_replace_value": "1"}},
    # Its input is the replaced resource's new physical id: updated in place.
    dep={"type": TR, "properties": {"value": {"get_resource": "repl"}}},
    # Reads an attribute that does not change: unchanged.
    reader={"type": TR, "properties": {"value": {"get_attr": ["keep", "output"]}}},
    gone={"type": TR},
)
NEW = tmpl(
    keep={"type": TR, "properties": {"value": "k"}},
    inplace={"type": TR, "properties": {"value": "b"}},
    repl={"type": TR, "properties": {"value": "r", "update_replace_value": "2"}},
    dep={"type": TR, "properties": {"value": {"get_resource": "repl"}}},
    reader={"type": TR, "properties": {"value": {"get_attr": ["keep", "output"]}}},
    extra={"type": "OS::Heat::None"},
)


def row_counts(engine):
    with engine.db.reader() as session:
        return {table.__table__.name: session.scalar(sa.select(sa.func.count()).select_from(
            table)) for table in (models.Stack, models.RawTemplate, models.Resource,
                                  models.Event, models.PhysicalObject)}


def names(preview):
    return {kind: sorted(r["resource_name"] for r in resources)
            for kind, resources in preview.items()}


def what_the_update_did(engine, stack_id, old, new):
    """Per kind, the resources as the update's events and rows show them."""
    events = engine.db.list_events(stack_id)
    start = max(i for i, e in enumerate(events)
                if e.resource_name is None and (e.action, e.status) == ("UPDATE", "IN_PROGRESS"))
    done = {}
    for event in events[start:]:
        if event.resource_name and event.status == "COMPLETE":
            done.setdefault(event.resource_name, set()).add(event.action)
    did = {kind: [] for kind in ("added", "updated", "replaced", "deleted", "unchanged")}
    for name in sorted(set(old["resources"]) | set(new["resources"])):
        actions = done.get(name, set())
        if name not in old["resources"]:
            did["added"].append(name)
        elif name not in new["resources"]:
            did["deleted"].append(name)
        elif "CREATE" in actions:
            did["replaced"].append(name)
        elif "UPDATE" in actions:
            did["updated"].append(name)
        else:
            did["unchanged"].append(name)
    return did


def test_update_preview_equals_what_the_update_does(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, OLD).id, timeout=60)
    before = row_counts(engine)
    preview = engine.preview_update_stack(stack.id, NEW)
    assert row_counts(engine) == before, "the preview wrote something"
    assert names(preview) == {"added": ["extra"], "updated": ["dep", "inplace"],
                              "replaced": ["repl"], "deleted": ["gone"],
                              "unchanged": ["keep", "reader"]}
    updated = engine.wait(engine.update_stack(stack.id, NEW).id, timeout=60)
    assert updated.stack_status == "UPDATE_COMPLETE", updated.status_reason
    assert what_the_update_did(engine, stack.id, OLD, NEW) == names(preview)
    # Heat's resource format.
    entry = preview["updated"][0]
    assert {"resource_name", "resource_type", "physical_resource_id", "resource_action",
            "resource_status", "stack_name", "properties"} <= set(entry)


def test_dry_run_with_existing_and_a_marked_failure(sqlite_engine, stack_name):
    """``existing=True`` keeps the stored template; a failed resource is
    replaced (as the update then does)."""
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(stack_name, OLD).id, timeout=60)
    same = engine.preview_update_stack(stack.id, None, existing=True)
    assert names(same)["unchanged"] == sorted(OLD["resources"])
    row = next(r for r in engine.db.list_resources(stack.id) if r.name == "keep")
    engine.db.update_resource(engine.db.lock_resource(row.id, "T/x"), "T/x", release=True,
                              status="FAILED")
    preview = engine.preview_update_stack(stack.id, None, existing=True)
    assert names(preview)["replaced"] == ["keep"]
    assert names(preview)["updated"] == ["reader"] or names(preview)["unchanged"] == [
        n for n in sorted(OLD["resources"]) if n != "keep"]
    engine.wait(engine.update_stack(stack.id, None, existing=True).id, timeout=60)
    assert what_the_update_did(engine, stack.id, OLD, OLD) == names(preview)
    with pytest.raises(exceptions.StackValidationFailed, match="template"):
        engine.preview_update_stack(stack.id, None)


CHILD = yaml.safe_dump(tmpl(
    same={"type": TR, "properties": {"value": "s"}},
    changing={"type": TR, "properties": {"value": {"get_param": "v"}}},
) | {"parameters": {"v": {"type": "string"}},
     "outputs": {"out": {"value": {"get_attr": ["changing", "output"]}}}})


def nested(value):
    return tmpl(
        child={"type": "child.yaml", "properties": {"v": value}},
        top={"type": TR, "properties": {"value": {"get_attr": ["child", "out"]}}},
    )


def test_previews_of_nested_stacks(engine, stack_name):
    files = {"child.yaml": CHILD}
    preview = engine.preview_stack(stack_name, nested("one"), files=files)
    assert preview["stack_name"] == stack_name
    child, top = preview["resources"]
    # Heat: a nested stack is the list of its resources.
    assert sorted(r["resource_name"] for r in child) == ["changing", "same"]
    assert {r["parent_resource"] for r in child} == {"child"}
    assert top["resource_name"] == "top"

    stack = engine.wait(engine.create_stack(stack_name, nested("one"), files=files).id,
                        timeout=60)
    before = row_counts(engine)
    preview = engine.preview_update_stack(stack.id, nested("two"), files=files,
                                          show_nested=True)
    assert row_counts(engine) == before
    assert {kind: sorted((r.get("parent_resource", ""), r["resource_name"]) for r in rs)
            for kind, rs in preview.items()} == {
        "added": [], "deleted": [], "replaced": [],
        "updated": [("", "child"), ("", "top"), ("child", "changing")],
        "unchanged": [("child", "same")]}
    flat = engine.preview_update_stack(stack.id, nested("two"), files=files)
    assert names(flat)["updated"] == ["child", "top"]
    done = engine.wait(engine.update_stack(stack.id, nested("two"), files=files).id,
                       timeout=60)
    assert done.stack_status == "UPDATE_COMPLETE", done.status_reason
    assert what_the_update_did(engine, stack.id, nested("one"), nested("two")) == names(flat)


def test_preview_of_a_bad_template_names_the_problem(sqlite_engine):
    with pytest.raises(exceptions.StackValidationFailed, match="resources.x"):
        sqlite_engine.preview_stack("p", tmpl(x={"type": TR, "properties": {"nope": 1}}))


MEMBER = yaml.safe_dump({"heat_template_version": "2018-08-31",
                         "parameters": {"index": {"type": "string"}},
                         "resources": {"inner": {"type": TR,
                                                 "properties": {"value": {"get_param": "index"}}}},
                         "outputs": {"host": {"value": {"get_attr": ["inner", "output"]}}}})


def grouped(count, member="member.yaml"):
    return tmpl(
        plain={"type": "OS::Heat::ResourceGroup", "properties": {
            "count": count, "resource_def": {"type": TR, "properties": {"value": "m%index%"}}}},
        templated={"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": member,
                                         "properties": {"index": "%index%"}}}},
        reader={"type": TR, "properties": {
            "value": {"list_join": [",", {"get_attr": ["templated", "host"]}]}}},
    )


def test_previews_of_resource_groups(engine, stack_name):
    """Heat answers a group's preview with its members' (heat/engine/
    resources/openstack/heat/resource_group.py: a group is a StackResource,
    whose preview is its nested stack's resources); an environment alias
    for the member type is followed as the create follows it."""
    files = {"member.yaml": MEMBER}
    environment = {"resource_registry": {"My::Member": "member.yaml"}}
    before = row_counts(engine)
    preview = engine.preview_stack(stack_name, grouped(2, "My::Member"), files=files,
                                   environment=environment)
    assert row_counts(engine) == before
    def pairs(entries):
        for entry in entries:
            if isinstance(entry, list):
                yield from pairs(entry)
            else:
                yield entry.get("parent_resource"), entry["resource_name"]

    # Each group is the list of its members; a member of a template type is
    # the list of its own resources.
    assert sorted(pairs(preview["resources"]), key=str) == sorted(
        [("plain", "0"), ("plain", "1"), ("0", "inner"), ("1", "inner"), (None, "reader")],
        key=str)
    assert len(preview["resources"]) == 3

    stack = engine.wait(engine.create_stack(stack_name, grouped(2), files=files).id,
                        timeout=60)
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    before = row_counts(engine)
    preview = engine.preview_update_stack(stack.id, grouped(3), files=files, show_nested=True)
    assert row_counts(engine) == before
    assert ("plain", "2") in {(r.get("parent_resource"), r["resource_name"])
                              for r in preview["added"]}
    flat = engine.preview_update_stack(stack.id, grouped(3), files=files)
    assert "plain" in names(flat)["updated"]
    done = engine.wait(engine.update_stack(stack.id, grouped(3), files=files).id, timeout=60)
    assert done.stack_status == "UPDATE_COMPLETE", done.status_reason
