"""Hidden parameters kept out of sight.

A ``hidden: true`` parameter's
value is grepped for in everything a stack's life writes or says: its
events, the log (at DEBUG), the stack as shown, and failure reasons; the
journal keeps none of the values a resource produced, and a resumed run
reads them back from the resource rows. test_hidden_parameters_conductors.py
greps every table, the jobboard and the conductors' logs.
"""

import json
import logging
import time
import uuid

import pytest

from nestedflow.flows import journal
from nestedflow.taskflow.sql_backend import TaskflowBackend

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


CHAINED = {
    "heat_template_version": "2018-08-31",
    "parameters": {"password": {"type": "string", "hidden": True}},
    "resources": {
        "r": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_param": "password"}}},
        "s": {"type": "OS::Heat::TestResource",
              "properties": {"value": {"get_attr": ["r", "output"]}}},
    },
}


def test_journal_keeps_rows_not_values_and_a_resume_reads_them_back(sqlite_engine, stack_name):
    engine = sqlite_engine
    stack = engine.wait(engine.create_stack(
        stack_name, CHAINED, parameters={"password": SECRET}).id, timeout=60)
    # An in-place update: its undo holds the properties it replaced.
    stack = engine.wait(engine.update_stack(
        stack.id, CHAINED, parameters={"password": SECRET + "2"}).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    traversal = engine.db.get_stack(stack.id).current_traversal
    detail = _finished_journal(engine, stack.id, traversal)
    assert SECRET not in json.dumps([atom.to_dict() for atom in detail])

    # What a run resuming the update hands on and reverts with.
    journal.restore_results(detail, lambda: engine.db.list_all_resources(stack.id), traversal)
    r = {row.name: row for row in engine.db.list_resources(stack.id)}["r"]
    restored = {atom.name: atom.results for atom in detail}[f"update r #{r.id}"]
    previous = restored["undo"].pop("previous")
    assert restored == {"ref": r.physical_id, "attrs": {"output": SECRET + "2"}, "row": r.id,
                        "undo": {"updated": r.id}}
    assert previous["value"] == SECRET
    engine.wait(engine.delete_stack(stack.id).id, timeout=60)


def _finished_journal(engine, stack_id, traversal):
    """The run's journal once its end is written: a stack settles (and
    ``wait`` returns) before its run has flushed the journal's tail."""
    deadline = time.monotonic() + 30
    while True:
        detail = journal.latest_detail(TaskflowBackend.for_database(engine.db), stack_id, traversal)
        if detail is not None and detail.state == "SUCCESS":
            return detail
        assert time.monotonic() < deadline, f"journal of {traversal} not finished: {detail}"
        time.sleep(0.05)
