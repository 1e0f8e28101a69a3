"""[engine] max_resources_per_stack: a stack is refused before anything is
stored when its own resources exceed the limit; a nested stack is counted
with every current resource of its tree (the parent's, the template or group
resource that owns it included) when it is created, so the parent resource
that would make the tree too large fails."""

import pytest

from nestedflow import exceptions, testing
from nestedflow.conf import CONF

CHILD = ("heat_template_version: 2018-08-31\nresources:\n"
         + "".join(f"  c{i}:\n    type: OS::Heat::None\n" for i in range(3)))


@pytest.fixture
def limit():
    def set_(value):
        CONF.set_override("max_resources_per_stack", value, group="engine")

    yield set_
    CONF.clear_override("max_resources_per_stack", group="engine")


def flat(count):
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(count)}}


def test_one_over_the_limit_is_refused_and_nothing_stored(sqlite_engine, stack_name, limit):
    limit(3)
    before = testing.stored_rows(sqlite_engine)
    with pytest.raises(exceptions.StackValidationFailed) as error:
        sqlite_engine.create_stack(stack_name, flat(4))
    assert str(error.value) == "resources: 4 resources exceed the limit of 3 per stack tree"
    assert error.value.path == "resources"
    assert testing.stored_rows(sqlite_engine) == before
    stack = sqlite_engine.create_stack(stack_name, flat(3))
    assert sqlite_engine.wait(stack.id, timeout=60).status == "COMPLETE"


def test_an_update_over_the_limit_is_refused(sqlite_engine, stack_name, limit):
    limit(3)
    stack = sqlite_engine.wait(sqlite_engine.create_stack(stack_name, flat(3)).id, timeout=60)
    before = testing.stored_rows(sqlite_engine)
    with pytest.raises(exceptions.StackValidationFailed, match="4 resources exceed the limit"):
        sqlite_engine.update_stack(stack.id, flat(4))
    assert testing.stored_rows(sqlite_engine) == before


def test_default_is_1000():
    assert CONF.engine.max_resources_per_stack == 1000


NESTED = {
    # The parent's two resources (one of them owns the child stack) and the
    # child's three.
    "template resource": ({"heat_template_version": "2018-08-31", "resources": {
        "other": {"type": "OS::Heat::None"},
        "child": {"type": "child.yaml"}}}, {"child.yaml": CHILD}, "child", 5),
    # The parent's group resource and its three members.
    "group": ({"heat_template_version": "2018-08-31", "resources": {
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 3, "resource_def": {"type": "OS::Heat::None"}}}}}, None, "group", 4),
}


@pytest.mark.parametrize("kind", NESTED)
def test_a_nested_tree_is_counted_as_a_whole(sqlite_engine, stack_name, limit, kind):
    template, files, owner, total = NESTED[kind]
    limit(total - 1)
    stack = sqlite_engine.create_stack(stack_name, template, files=files,
                                       disable_rollback=True)
    stack = sqlite_engine.wait(stack.id, timeout=60)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert f"{total} resources exceed the limit of {total - 1} per stack tree" in (
        stack.status_reason), stack.status_reason
    failed = {r.name: r for r in sqlite_engine.list_resources(stack.id)}[owner]
    assert failed.status == "FAILED"
    # The child stack that would have exceeded the limit was never stored.
    assert [s.id for s in sqlite_engine.list_stacks(show_nested=True)] == [stack.id]

    limit(total)
    stack = sqlite_engine.create_stack(stack_name + "-fits", template, files=files)
    assert sqlite_engine.wait(stack.id, timeout=60).status == "COMPLETE"
