"""A resource task re-run after a crash returns what its first run returned.

The run's journal is written behind the engine (flows/journal_backend.py),
so a crash can lose the record of a task that finished: the resumed run
runs it again. The task then finds its work done by this traversal and must
hand on the same result -- including what a rollback has to undo, or a
rolled-back update would keep the new properties (or the replacement).
"""

import pytest

from nestedflow.dispatch import held
from nestedflow.flows import factories, runtime, tasks

pytestmark = pytest.mark.functional


def _template(**properties):
    return {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::TestResource",
                                "properties": {"value": "one", **properties}}}}


def _run_twice(engine, stack_id, template, name="a"):
    hold = held.HeldDispatcher()
    engine._dispatcher = hold
    engine.update_stack(stack_id, template)
    stack_id, traversal_id, action = hold.held[-1]
    rt = engine.runtime
    rt.db.claim_traversal(stack_id, traversal_id, "run-1")
    with runtime.installed(rt, "run-1"):
        flow = factories.stack_traversal(stack_id, traversal_id, action)
        task = next(t for t in flow if isinstance(t, tasks.ConvergeResource)
                    and t.resource_name == name)
        results = []
        for _ in range(2):
            task.pre_execute()
            try:
                results.append(task.execute(traversal=traversal_id))
            finally:
                task.post_execute()
    return results


@pytest.mark.parametrize("change, kind", [
    ({"value": "two"}, "updated"),
    ({"update_replace": True, "value": "two"}, "replaced"),
])
def test_a_converge_rerun_returns_the_same_undo(engine, stack_name, change, kind):
    stack = engine.wait(engine.create_stack(stack_name, _template()).id, timeout=60)
    assert stack.status == "COMPLETE", stack.status_reason
    first, again = _run_twice(engine, stack.id, _template(**change))
    assert first["undo"] and kind in first["undo"]
    assert again == first
    if kind == "updated":
        assert first["undo"]["previous"]["value"] == "one"


def test_a_converge_rerun_of_an_added_resource_returns_its_undo(engine, stack_name):
    stack = engine.wait(engine.create_stack(stack_name, _template()).id, timeout=60)
    template = _template()
    template["resources"]["b"] = {"type": "OS::Heat::TestResource"}
    first, again = _run_twice(engine, stack.id, template, name="b")
    assert first["undo"] == {"created": first["row"]}
    assert again == first
