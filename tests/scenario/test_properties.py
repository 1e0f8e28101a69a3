"""Property-based: random templates, updates, failures and overlaps.

Hypothesis draws a first template of test resources (a random DAG of
``get_attr``/``get_resource``/``depends_on`` edges), then a sequence of
operations -- updates to other random templates over the same names (so
resources are kept, updated in place, replaced, added, removed, renamed and
their edges inverted), updates that fail with or without rollback, cancels,
a delete -- and, between them, a random schedule: which traversal advances
how many steps before the next operation arrives. It all runs in the
deterministic simulation, so a failing example shrinks and replays.

After every settled state: a COMPLETE stack's live objects are exactly its
current template's (properties resolved from the live objects, nothing
leaked); a FAILED one at least owns every object it left; a deleted one
left nothing. At the end a clean update must converge whatever is there.
"""

import tempfile
import uuid

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from nestedflow.resources.none import NoneResource
from nestedflow.resources.random_string import RandomString
from nestedflow.resources.registry import ResourceRegistry
from nestedflow.testing.stepped import Simulation
from scenario import expect
from scenario.scenarios import SLOW_REFUSAL

NAMES = ["r0", "r1", "r2", "r3", "r4", "r5"]
#: Test resources; Test::SlowToRefuse only finds out it must be replaced
#: after its update was in flight for a while.
TYPES = {"test": "OS::Heat::TestResource", "slow": "Test::SlowToRefuse"}
FAILING_STATES = {"CREATE_FAILED", "UPDATE_FAILED", "CHECK_FAILED"}


@st.composite
def templates(draw, may_fail=False):
    """A template over 1-6 of NAMES in a random dependency order."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    kinds = {name: draw(st.sampled_from(["test"] * 5 + ["slow", "random", "none"]))
             for name in names}
    attribute = {"test": "output", "slow": "output", "random": "value"}
    resources = {}
    for i, name in enumerate(names):
        earlier = names[:i]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2)) if earlier else []
        parts = [draw(st.sampled_from(["x", "y"]))]
        depends_on = []
        for dep in deps:
            how = draw(st.sampled_from(["attr", "ref", "depends_on"]))
            if how == "attr" and kinds[dep] in attribute:
                parts.append({"get_attr": [dep, attribute[kinds[dep]]]})
            elif how == "depends_on":
                depends_on.append(dep)
            else:
                parts.append({"get_resource": dep})
        kind = kinds[name]
        if kind == "random":
            definition = {"type": "OS::Heat::RandomString",
                          "properties": {"length": draw(st.sampled_from([6, 8]))}}
            if len(parts) > 1:
                definition["properties"]["salt"] = {"list_join": ["-", parts]}
        elif kind == "none":
            definition = {"type": "OS::Heat::None"}
            depends_on += deps
        else:
            properties = {"value": {"list_join": ["-", parts]} if len(parts) > 1 else parts[0]}
            replace = draw(st.sampled_from([None, None, "p", "q"]))
            if replace:
                properties["update_replace_value"] = replace
            if draw(st.sampled_from([False, False, True])):
                # In the simulation a wait takes no time: the action pauses
                # in flight and other traversals can be stepped meanwhile.
                properties["wait_secs"] = 5
            definition = {"type": TYPES[kind], "properties": properties}
        if depends_on:
            definition["depends_on"] = sorted(set(depends_on))
        resources[name] = definition
    if may_fail:
        tests = [n for n, d in resources.items() if d["type"] in TYPES.values()]
        if tests:
            resources[draw(st.sampled_from(tests))]["properties"]["fail"] = True
    outputs = {f"out_{n}": {"value": {"get_resource": n}} for n in list(resources)[:2]}
    return {"heat_template_version": "2016-10-14", "resources": resources,
            "outputs": outputs}


@st.composite
def operations(draw):
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["update", "update", "update", "failing update",
                                     "cancel"]))
        if kind == "cancel":
            ops.append(("cancel", draw(st.booleans())))
        else:
            failing = kind == "failing update"
            ops.append(("update", draw(templates(may_fail=failing)),
                        draw(st.booleans()) if failing else False))
    if draw(st.booleans()):
        ops.append(("delete",))
    return ops


def check_settled(sim, stack_id, history):
    stack = sim.engine.get_stack(stack_id)
    state = f"{stack.action}_{stack.status}"
    if state == "DELETE_COMPLETE":
        found = expect.deleted_problems(sim.engine, stack_id)
    elif state in FAILING_STATES or state == "ROLLBACK_FAILED":
        found = expect.tracked_problems(sim.engine, stack_id)
    elif state == "ROLLBACK_COMPLETE" and sim.engine.db.get_stack(
            stack_id).prev_raw_template_id is None:
        # A rolled back create: nothing of it is left.
        found = [f"left: {o.resource_name}" for o in sim.engine.store.live(stack_id)]
        found += expect.tracked_problems(sim.engine, stack_id)
    else:
        found = expect.problems(sim.engine, stack_id)
    assert not found, f"after {history} -> {state} ({stack.status_reason}):\n" + "\n".join(
        found)
    return state


def advance(sim, data, history):
    """Step the running traversals a random number of times, in a random order."""
    for _ in range(data.draw(st.integers(0, 14), label="steps")):
        live = [t for t in sim.traversals if not t.finished]
        if not live:
            return
        traversal = live[data.draw(st.integers(0, len(live) - 1), label="traversal")]
        sim.start(traversal)
        runnable = [i for i in sim._ordered(traversal.runnable())
                    if (i.state, i.waiting_for) != ("paused", "lock")]
        if not runnable:
            continue
        item = runnable[data.draw(st.integers(0, len(runnable) - 1), label="item")]
        history.append(f"{traversal.action[:1]}:{item.label}")
        sim.step(traversal, item.name)


@settings(max_examples=30, deadline=None,
          # No "explain" phase: tracing every line of threads is very slow.
          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(first=templates(), ops=operations(), data=st.data())
def test_random_updates_overlaps_and_failures_converge(first, ops, data):
    registry = ResourceRegistry.for_testing(
        {**SLOW_REFUSAL, "OS::Heat::RandomString": RandomString, "OS::Heat::None": NoneResource})
    with tempfile.TemporaryDirectory() as tmp, Simulation(
            f"sqlite:///{tmp}/{uuid.uuid4().hex}.sqlite", registry=registry) as sim:
        history = ["create"]
        create = sim.create("s", first)
        stack_id = create.stack_id
        for op in ops:
            advance(sim, data, history)
            stack = sim.engine.get_stack(stack_id)
            if data.draw(st.booleans(), label="settle first") or stack.action == "DELETE":
                sim.settle()
                check_settled(sim, stack_id, history)
                stack = sim.engine.get_stack(stack_id)
            if op[0] == "update" and stack.action != "DELETE":
                history.append(f"update(rollback={not op[2]})")
                sim.update(stack_id, op[1], disable_rollback=op[2])
            elif op[0] == "cancel" and stack.status == "IN_PROGRESS" and stack.action in (
                    "CREATE", "UPDATE"):
                history.append(f"cancel(rollback={op[1]})")
                sim.cancel(stack_id, rollback=op[1])
            elif op[0] == "delete":
                history.append("delete")
                sim.delete(stack_id)
        sim.settle()
        state = check_settled(sim, stack_id, history)
        if state == "DELETE_COMPLETE":
            return
        # Whatever the history left, a clean update converges it...
        final = data.draw(templates(), label="final template")
        history.append("final update")
        sim.update(stack_id, final)
        sim.settle()
        assert check_settled(sim, stack_id, history) == "UPDATE_COMPLETE"
        # ...and a delete leaves nothing.
        sim.delete(stack_id)
        sim.settle()
        assert check_settled(sim, stack_id, history) == "DELETE_COMPLETE"
