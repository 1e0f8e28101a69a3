"""Hidden parameters kept out of sight.

A ``hidden: true`` parameter's
value is grepped for in everything a stack's life writes or says: its
events, the log (at DEBUG), the stack as shown, and failure reasons.
"""

import logging
import uuid

import pytest

pytestmark = pytest.mark.functional

SECRET = "s3cr3t-" + uuid.uuid4().hex

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"password": {"type": "string", "hidden": True},
                   "fail": {"type": "boolean", "default": False}},
    "resources": {
        "r": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_param": "password"}}},
        "f": {"type": "OS::Heat::TestResource", "depends_on": ["r"],
              "properties": {"value": {"get_param": "password"},
                             "fail": {"get_param": "fail"}}},
    },
}


def test_hidden_parameter_never_shows(sqlite_engine, stack_name, caplog):
    engine = sqlite_engine
    caplog.set_level(logging.DEBUG)
    stack = engine.wait(engine.create_stack(
        stack_name, TEMPLATE, parameters={"password": SECRET}).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    stack = engine.wait(engine.update_stack(
        stack.id, TEMPLATE, parameters={"password": SECRET + "2", "fail": True}).id,
        timeout=60)
    # Failed, then rolled back: failure reasons must not carry it either.
    assert "Test Resource failed" in " ".join(e.status_reason
                                              for e in engine.db.list_events(stack.id))
    shown = engine.get_stack(stack.id)
    texts = [repr(shown), repr(getattr(shown, "parameters", None)), stack.status_reason]
    texts += [f"{e.status_reason} {e.physical_id}" for e in engine.db.list_events(stack.id)]
    texts += [record.getMessage() for record in caplog.records]
    leaks = [text for text in texts if SECRET in str(text)]
    assert leaks == []
    engine.wait(engine.delete_stack(stack.id).id, timeout=60)
