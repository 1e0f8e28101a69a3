"""kill -9 of the conductor running a stack, at five points across its
create, update and delete (PostgreSQL, three conductors).

Each time the stack settles by itself, every current resource has exactly
one live physical object (nothing leaked, nothing made twice), no
resource lock is left behind, every action that had finished before the
kill is not run again (one start event), the interrupted action is run
again by the new owner, and the killed conductor wrote nothing after it
died. The cases before the first action, during a rollback and with every
conductor dead are in test_conductor_crashes.py.
"""

import time
import uuid

import pytest
from conductor_cluster import wait_for
from test_conductor_crashes import (
    assert_exactly_once,
    assert_silent_since,
    event_seen,
    starts,
    takeover,
    utcnow,
)

pytestmark = pytest.mark.functional


@pytest.fixture
def cluster_db_url(pg_url):
    """PostgreSQL only: the crash points are the same on every database."""
    return pg_url


def _template(waits, value="a"):
    """r0 -> r1 -> r2; ``waits[name]`` = {action: seconds}."""
    return {"heat_template_version": "2018-08-31", "resources": {
        f"r{i}": {"type": "OS::Heat::TestResource",
                  "properties": {"value": f"{value}{i}",
                                 "action_wait_secs": waits.get(f"r{i}", {})},
                  **({"depends_on": [f"r{i - 1}"]} if i else {})} for i in range(3)}}


SLOW = 2.5

#: (traversal, action of the resources, the resource it is killed in).
POINTS = [
    ("create", "CREATE", "r0"),  # in the first action
    ("create", "CREATE", "r1"),  # after r0 finished
    ("update", "UPDATE", "r0"),  # in an in-place update
    ("update", "UPDATE", "r2"),  # after two updates finished
    ("delete", "DELETE", "r1"),  # after r2's delete finished
]


@pytest.mark.parametrize(("traversal", "action", "victim_in"), POINTS,
                         ids=[f"{t}-{r}" for t, _, r in POINTS])
def test_kill_at(cluster, probe, traversal, action, victim_in):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    slow = {victim_in: {action.lower(): SLOW}}
    stack = engine.create_stack(f"kp-{uuid.uuid4().hex[:6]}",
                                _template(slow if traversal == "create" else {}))
    before = {}
    if traversal != "create":
        created = engine.wait(stack.id, timeout=60)
        assert created.status == "COMPLETE", created.status_reason
        before = {r["name"]: r["physical_id"] for r in probe.resources(stack.id)}
        if traversal == "update":
            engine.update_stack(stack.id, _template(slow, value="b"))
        else:
            # The delete waits come from the properties the resources were
            # updated to: an update first makes r1's delete slow.
            engine.update_stack(stack.id, _template(slow))
            updated = engine.wait(stack.id, timeout=60)
            assert updated.status == "COMPLETE", updated.status_reason
            before = {r["name"]: r["physical_id"] for r in probe.resources(stack.id)}
            engine.delete_stack(stack.id)
    started = wait_for(lambda: event_seen(probe, stack.id, victim_in, action, "IN_PROGRESS"),
                       60, what=f"{victim_in} to start its {action}")
    victim = cluster.conductors[started["engine_id"]]
    cluster.kill(victim)
    killed_at, killed = time.monotonic(), utcnow()
    holder, took = takeover(cluster, probe, stack.id, victim, killed_at)
    final = engine.wait(stack.id, timeout=60)
    print(f"killed in {victim_in}'s {action}: {holder.name} took over after {took:.1f}s")
    assert (final.action, final.status) == (action, "COMPLETE"), final.status_reason

    order = ["r0", "r1", "r2"] if action != "DELETE" else ["r2", "r1", "r0"]
    for name in order:
        engines = [e["engine_id"] for e in starts(probe, stack.id, name, action)]
        position, killed_in = order.index(name), order.index(victim_in)
        if position < killed_in:
            assert engines == [victim.name], (name, engines)  # done: not redone
        elif position == killed_in:
            assert engines == [victim.name, holder.name], (name, engines)  # redone once
        else:
            assert engines == [holder.name], (name, engines)
    if action == "DELETE":
        assert_exactly_once(probe, stack.id, 0)
    else:
        assert_exactly_once(probe, stack.id, 3)
    if action == "UPDATE":
        # In place: the same physical objects, none replaced.
        assert {r["name"]: r["physical_id"] for r in probe.resources(stack.id)
                if r["current"]} == before
        assert len(probe.resources(stack.id)) == 3
    assert_silent_since(probe, stack.id, victim, killed)
