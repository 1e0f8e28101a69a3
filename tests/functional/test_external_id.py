"""Heat's external_id (heat/engine/resource.py create/update, hot_spec.rst;
heat/tests/test_resource.py test_create_from_external, test_updated_from_external):
the resource adopts an existing object, is not created or deleted, and an
update changing the id is refused."""

import pytest

from nestedflow import exceptions, testing

OWNER = """
heat_template_version: 2016-10-14
resources:
  made: {type: OS::Heat::TestResource, properties: {value: real}}
"""

ADOPTER = """
heat_template_version: 2016-10-14
parameters:
  id: {type: string}
resources:
  adopted:
    type: OS::Heat::TestResource
    external_id: {get_param: id}
    properties: {value: ignored}
  user:
    type: OS::Heat::TestResource
    properties: {value: {get_resource: adopted}}
outputs:
  ref: {value: {get_resource: adopted}}
  user: {value: {get_attr: [user, output]}}
"""


def _settle(engine, stack):
    return engine.wait(stack.id, timeout=60)


def test_adopt_update_and_delete(sqlite_engine, stack_name):
    engine = sqlite_engine
    owner = _settle(engine, engine.create_stack(stack_name + "-owner", OWNER))
    object_id = engine.list_resources(owner.id)[0].physical_id
    before = len(testing.physical_objects(engine))

    stack = _settle(engine, engine.create_stack(stack_name, ADOPTER,
                                                parameters={"id": object_id}))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert stack.outputs == {"ref": object_id, "user": object_id}
    assert {r.name: r.physical_id for r in engine.list_resources(stack.id)}["adopted"] == (
        object_id)
    # Only "user" made an object; the adopted one was not created.
    assert len(testing.physical_objects(engine)) == before + 1

    # Same id, other properties: nothing to do. A new id: refused.
    template = ADOPTER.replace("value: ignored", "value: changed")
    stack = _settle(engine, engine.update_stack(stack.id, template,
                                                parameters={"id": object_id}))
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    stack = _settle(engine, engine.update_stack(stack.id, template, parameters={"id": "other"},
                                                disable_rollback=True))
    assert (stack.action, stack.status) == ("UPDATE", "FAILED")
    assert ("Update to property external_id of adopted (OS::Heat::TestResource) "
            "is not supported.") in stack.status_reason

    stack = _settle(engine, engine.delete_stack(stack.id))
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE"), stack.status_reason
    # The adopted object outlives the stack that adopted it.
    assert object_id in {o.id for o in testing.physical_objects(engine)}


@pytest.mark.parametrize("template, message", [
    ("heat_template_version: 2016-10-14\nresources:\n  a: {type: OS::Heat::None}\n"
     "  b: {type: OS::Heat::None, external_id: x, depends_on: a}\n",
     "resources.b.depends_on: Invalid dependency with external OS::Heat::None resource: x"),
    ("heat_template_version: 2016-10-14\nresources:\n"
     "  b: {type: OS::Heat::None, external_id: [x]}\n",
     "resources.b.external_id: external_id must be a string"),
    ("heat_template_version: 2016-04-08\nresources:\n"
     "  b: {type: OS::Heat::None, external_id: x}\n",
     "resources.b.external_id"),
])
def test_refused_before_storing(sqlite_engine, stack_name, template, message):
    with pytest.raises(exceptions.StackValidationFailed) as info:
        sqlite_engine.create_stack(stack_name, template)
    assert str(info.value).startswith(message)
    assert sqlite_engine.list_stacks() == []
