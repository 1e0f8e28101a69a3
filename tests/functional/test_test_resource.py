"""OS::Heat::TestResource's properties as Heat's
(heat/engine/resources/openstack/heat/test_resource.py)."""

import time

T = """
heat_template_version: 2018-08-31
parameters:
  value: {type: string, default: one}
  replace: {type: boolean, default: false}
resources:
  r:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
      update_replace: {get_param: replace}
      attr_wait_secs: 0.3
      constraint_prop_secs: 0.3
      client_name: nova
      entity_name: servers
outputs:
  out: {value: {get_attr: [r, output]}}
"""


def _physical(engine, stack_id):
    return engine.list_resources(stack_id)[0].physical_id


def test_properties_and_replacement(sqlite_engine, stack_name):
    engine = sqlite_engine
    started = time.monotonic()
    stack = engine.create_stack(stack_name, T)
    # test_constr (Heat's TestConstraintDelay) makes validation itself wait.
    assert time.monotonic() - started >= 0.3
    stack = engine.wait(stack.id, timeout=60)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert stack.outputs == {"out": "one"}
    first = _physical(engine, stack.id)
    # update_replace without a value change: updated in place, as in Heat.
    stack = engine.wait(engine.update_stack(stack.id, T, parameters={"replace": True}).id,
                        timeout=60)
    assert (stack.status, _physical(engine, stack.id)) == ("COMPLETE", first)
    # update_replace with a new value: replaced.
    stack = engine.wait(engine.update_stack(
        stack.id, T, parameters={"replace": True, "value": "two"}).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    assert _physical(engine, stack.id) != first and stack.outputs == {"out": "two"}
