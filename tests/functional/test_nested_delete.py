"""A delete deletes every stack of the tree, in whatever state each is, and
leaves no physical object: template resources, ``OS::Heat::Stack`` and
``ResourceGroup`` (of plain members and of template members), after a
complete, failed, interrupted (in progress), suspended create or update;
``OS::Heat::ResourceChain`` of template members too.

Heat records a nested stack's id on its resource as soon as the stack
exists (heat/engine/resources/stack_resource.py ``create_with_template``
sets ``resource_id`` before waiting), so deleting a resource whose nested
stack failed -- or is still being built -- deletes that stack
(``StackResource.handle_delete`` -> ``delete_nested``).
"""

import time

import pytest
import sqlalchemy as sa
import yaml

from nestedflow.db import models

TR = "OS::Heat::TestResource"
CHILD = yaml.safe_dump({
    "heat_template_version": "2018-08-31",
    "parameters": {"value": {"type": "string", "default": "a"},
                   "fail": {"type": "boolean", "default": False},
                   "wait": {"type": "number", "default": 0}},
    "resources": {
        "obj": {"type": TR, "properties": {"value": {"get_param": "value"}}},
        "slow": {"type": TR, "depends_on": ["obj"], "properties": {
            "value": {"get_param": "value"}, "fail": {"get_param": "fail"},
            "wait_secs": {"get_param": "wait"}}},
    },
})
PARAMS = {"value": {"get_param": "value"}, "fail": {"get_param": "fail"},
          "wait": {"get_param": "wait"}}
PARENT = {
    "heat_template_version": "2018-08-31",
    "parameters": {"value": {"type": "string", "default": "a"},
                   "fail": {"type": "boolean", "default": False},
                   "wait": {"type": "number", "default": 0},
                   "count": {"type": "number", "default": 2}},
    "resources": {
        "top": {"type": TR},
        "tres": {"type": "child.yaml", "properties": PARAMS},
        "stack": {"type": "OS::Heat::Stack", "properties": {
            "template": {"get_file": "child.yaml"}, "parameters": PARAMS}},
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": {"get_param": "count"},
            "resource_def": {"type": "child.yaml", "properties": PARAMS}}},
        "chain": {"type": "OS::Heat::ResourceChain", "properties": {
            "resources": ["child.yaml", "child.yaml"], "resource_properties": PARAMS}},
        "plain": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": {"get_param": "count"},
            "resource_def": {"type": TR, "properties": {
                "value": {"get_param": "value"}, "fail": {"get_param": "fail"},
                "wait_secs": {"get_param": "wait"}}}}},
    },
}
FILES = {"child.yaml": CHILD}


def tree(engine, root_id):
    """(ids of the tree's stacks not deleted, live physical objects of any of them)."""
    with engine.db.reader() as session:
        rows = session.execute(sa.select(models.Stack.id, models.Stack.deleted_at).where(
            models.Stack.root_id == root_id)).all()
    live = {stack_id for stack_id, deleted_at in rows if deleted_at is None}
    objects = [o for stack_id, _ in rows for o in engine.store.live(stack_id)]
    return live, objects


def wait_for(predicate, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def nested_in_progress(engine, root_id, action, minimum):
    def ready():
        with engine.db.reader() as session:
            rows = session.execute(sa.select(models.Resource.action, models.Resource.status)
                                   .join(models.Stack, models.Stack.id == models.Resource.stack_id)
                                   .where(models.Stack.root_id == root_id,
                                          models.Stack.nested_depth > 0,
                                          models.Resource.name == "slow")).all()
        return sum(1 for r in rows if tuple(r) == (action, "IN_PROGRESS")) >= minimum
    return ready


def settle(engine, stack, timeout=180):
    return engine.wait(stack.id, timeout=timeout)


STATES = ["create_complete", "create_failed", "create_in_progress", "update_failed",
          "update_in_progress", "suspended", "rollback_complete"]


def _bring_to(engine, name, state):
    """A stack whose nested stacks are in ``state``."""
    create = {"create_failed": {"fail": True}, "create_in_progress": {"wait": 15}}.get(state, {})
    stack = engine.create_stack(name, PARENT, create, FILES,
                                disable_rollback=state != "rollback_complete")
    if state == "create_in_progress":
        # Nested stacks' slow resources are being created (how many at once
        # depends on the worker pool).
        wait_for(nested_in_progress(engine, stack.id, "CREATE", 2))
        return stack
    stack = settle(engine, stack)
    if state == "create_failed":
        assert stack.stack_status == "CREATE_FAILED"
        return stack
    assert stack.stack_status == "CREATE_COMPLETE", stack.status_reason
    if state == "update_failed":
        stack = settle(engine, engine.update_stack(stack.id, PARENT, {"value": "b", "fail": True},
                                                   FILES))
        assert stack.stack_status == "UPDATE_FAILED"
    elif state == "update_in_progress":
        engine.update_stack(stack.id, PARENT, {"value": "b", "wait": 15}, FILES)
        wait_for(nested_in_progress(engine, stack.id, "UPDATE", 2))
    elif state == "suspended":
        stack = settle(engine, engine.suspend_stack(stack.id))
        assert stack.stack_status == "SUSPEND_COMPLETE", stack.status_reason
    elif state == "rollback_complete":
        stack = settle(engine, engine.update_stack(stack.id, PARENT, {"value": "b", "fail": True},
                                                   FILES))
        assert stack.stack_status == "ROLLBACK_COMPLETE", stack.status_reason
    return stack


@pytest.mark.parametrize("state", STATES)
def test_delete_leaves_no_nested_stack_and_no_object(sqlite_engine, stack_name, state):
    engine = sqlite_engine
    stack = _bring_to(engine, stack_name, state)
    live, objects = tree(engine, stack.id)
    # The parent, tres, stack, the two groups' stacks and group's two members
    # (a failing or unfinished create may not have made every child yet).
    assert len(live) >= (2 if state.startswith("create_") else 7)
    deleted = settle(engine, engine.delete_stack(stack.id))
    assert deleted.stack_status == "DELETE_COMPLETE", deleted.status_reason
    live, objects = tree(engine, stack.id)
    assert live == set(), f"nested stacks left undeleted: {len(live)}"
    assert objects == [], [(o.resource_name, o.stack_id) for o in objects]


def test_delete_while_a_group_of_125_is_created(make_engine, pg_url, stack_name):
    engine = make_engine(pg_url)
    template = {"heat_template_version": "2018-08-31", "resources": {"group": {
        "type": "OS::Heat::ResourceGroup", "properties": {"count": 125, "resource_def": {
            "type": TR, "properties": {"wait_secs": 1}}}}}}
    stack = engine.create_stack(stack_name, template, disable_rollback=True)

    def members_started():
        with engine.db.reader() as session:
            return session.scalar(sa.select(sa.func.count()).select_from(models.Resource)
                                  .join(models.Stack, models.Stack.id == models.Resource.stack_id)
                                  .where(models.Stack.root_id == stack.id,
                                         models.Resource.action == "CREATE")) >= 10

    wait_for(members_started)
    deleted = settle(engine, engine.delete_stack(stack.id), timeout=300)
    assert deleted.stack_status == "DELETE_COMPLETE", deleted.status_reason
    live, objects = tree(engine, stack.id)
    assert live == set() and objects == []


def test_an_orphaned_nested_stack_is_found_and_removed(sqlite_engine, stack_name):
    """A nested stack whose parent is gone (left by an older release, or a
    parent row removed by hand) is listed and can be deleted on its own."""
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, PARENT, {}, FILES))
    child = {r.name: r.physical_id for r in engine.list_resources(stack.id)}["tres"]
    with engine.db.writer() as session:  # the parent vanishes behind the engine's back
        session.execute(sa.update(models.Stack).where(models.Stack.id == stack.id)
                        .values(deleted_at=models.utcnow(), action="DELETE",
                                status="COMPLETE"))
    orphans = {s.id for s in engine.list_stacks(show_nested=True)}
    assert child in orphans
    deleted = settle(engine, engine.delete_stack(child))
    assert deleted.stack_status == "DELETE_COMPLETE", deleted.status_reason
    assert engine.store.live(child) == []


def test_a_child_no_resource_records_is_deleted_with_its_parent(sqlite_engine, stack_name):
    """As an older release left a failed nested create: the resource row
    has no physical id and no create key, the child stack exists."""
    engine = sqlite_engine
    stack = settle(engine, engine.create_stack(stack_name, PARENT, {}, FILES))
    with engine.db.writer() as session:
        session.execute(sa.update(models.Resource).where(
            models.Resource.stack_id == stack.id, models.Resource.name.in_(["tres", "group"]))
            .values(physical_id=None, attr_data={}, action="CREATE", status="FAILED"))
    deleted = settle(engine, engine.delete_stack(stack.id))
    assert deleted.stack_status == "DELETE_COMPLETE", deleted.status_reason
    assert tree(engine, stack.id) == (set(), [])
