"""Conductors killed (SIGKILL) or paused (SIGSTOP) at chosen points of a stack.

Each case checks what an operator cares about: the stack reaches the
expected final state by itself, every resource's physical object exists
exactly once (nothing leaked, nothing created twice), and the conductor
that lost its job wrote nothing after the newer owner took over.

Points are made exact with row locks: the test holds ``SELECT ... FOR
UPDATE`` on a resource row, so the conductor blocks precisely when it
tries to take that resource's lock -- before its first action, or between
two actions -- and is killed there.
"""

import datetime
import signal
import time
import uuid

import pytest
from conductor_cluster import SESSION_TIMEOUT, wait_for

pytestmark = pytest.mark.functional


def on(db):
    return pytest.mark.parametrize("shared_db_url", [db], indirect=True)


def chain(*waits, fail_last=False, delete_wait=0):
    """r0 -> r1 -> ...: TestResources whose creates take ``waits[i]`` seconds."""
    resources = {}
    for i, wait in enumerate(waits):
        props = {"value": f"v{i}", "wait_secs": wait,
                 "action_wait_secs": {"delete": delete_wait}}
        if fail_last and i == len(waits) - 1:
            props["fail"] = True
        resources[f"r{i}"] = {"type": "OS::Heat::TestResource", "properties": props,
                              **({"depends_on": [f"r{i - 1}"]} if i else {})}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def event_seen(probe, stack_id, name, action, status):
    for event in probe.events(stack_id):
        if (event["resource_name"], event["action"], event["status"]) == (name, action, status):
            return event
    return None


def starts(probe, stack_id, name, action="CREATE"):
    return [e for e in probe.events(stack_id) if e["resource_name"] == name
            and e["action"] == action and e["status"] == "IN_PROGRESS"]


def assert_exactly_once(probe, stack_id, expected):
    """``expected`` live physical objects, one per current resource, no others."""
    rows = [r for r in probe.resources(stack_id) if r["current"]]
    live = [o for o in probe.physical(stack_id) if o["deleted_at"] is None]
    assert len(live) == expected, live
    assert sorted(o["id"] for o in live) == sorted(
        r["physical_id"] for r in rows if r["status"] == "COMPLETE" and r["action"] != "DELETE")
    assert len({o["resource_id"] for o in live}) == len(live)  # none created twice
    assert all(r["engine_id"] is None for r in rows)  # no resource lock left behind


def assert_silent_since(probe, stack_id, conductor, since):
    """The conductor that lost the job wrote no event after ``since``."""
    late = [e for e in probe.events(stack_id)
            if e["engine_id"] == conductor.name and e["timestamp"] >= since]
    assert late == [], late


def snapshot(probe, stack_id):
    stack = probe.stack(stack_id)
    return {
        "stack": (stack["action"], stack["status"], stack["atomic_key"],
                  stack["traversal_owner"], stack["updated_at"]),
        "resources": [(r["id"], r["action"], r["status"], r["atomic_key"], r["engine_id"],
                       r["physical_id"], r["updated_at"]) for r in probe.resources(stack_id)],
        "events": [e["id"] for e in probe.events(stack_id)],
        "objects": sorted((o["id"], o["deleted_at"], o["updated_at"])
                          for o in probe.physical(stack_id)),
    }


def takeover(cluster, probe, stack_id, lost, since, timeout=60):
    """Wait until another conductor holds the job (or already acted for it);
    returns (that conductor, seconds since ``since``)."""
    def other():
        holder = cluster.find_holder(stack_id)
        if holder is not None and holder is not lost:
            return holder
        for event in probe.events(stack_id):
            if event["engine_id"] not in (None, lost.name) and event["timestamp"] >= lost_at:
                return cluster.conductors[event["engine_id"]]
        return None

    lost_at = utcnow() - datetime.timedelta(seconds=time.monotonic() - since)
    holder = wait_for(other, timeout, what="another conductor to take the job over")
    return holder, time.monotonic() - since


@on("postgresql")
def test_kill_before_first_action(cluster, probe):
    engine = cluster.engine()
    stack = engine.create_stack(f"k1-{uuid.uuid4().hex[:6]}", chain(0.5, 0.5, 0.5))
    rows = probe.resources(stack.id)
    with probe.row_locks([r["id"] for r in rows]):
        c1 = cluster.start("c1")
        wait_for(lambda: probe.lock_waiters() >= 1, 30, what="c1 to block on the first lock")
        assert (probe.stack(stack.id)["traversal_owner"] or "").startswith("c1:")
        cluster.kill(c1)
        killed_at, killed = time.monotonic(), utcnow()
    c2, c3 = cluster.start_many(["c2", "c3"])
    holder, took = takeover(cluster, probe, stack.id, c1, killed_at)
    final = engine.wait(stack.id, timeout=60)
    print(f"killed before the first action: {holder.name} took over after {took:.1f}s")
    assert took >= SESSION_TIMEOUT - 1  # the claim lapsed with c1's session
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    assert not [e for e in probe.events(stack.id) if e["engine_id"] == "c1"]
    for name in ("r0", "r1", "r2"):
        assert len(starts(probe, stack.id, name)) == 1
    assert_exactly_once(probe, stack.id, 3)
    assert_silent_since(probe, stack.id, c1, killed)


@on("mysql")
def test_kill_mid_action(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack = engine.create_stack(f"k2-{uuid.uuid4().hex[:6]}", chain(3, 0.5, 0.5))
    first = wait_for(lambda: event_seen(probe, stack.id, "r0", "CREATE", "IN_PROGRESS"), 30,
                     what="r0 to start")
    victim = cluster.conductors[first["engine_id"]]
    cluster.kill(victim)
    killed_at, killed = time.monotonic(), utcnow()
    holder, took = takeover(cluster, probe, stack.id, victim, killed_at)
    final = engine.wait(stack.id, timeout=60)
    print(f"killed mid-action: {holder.name} took over after {took:.1f}s")
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    # r0 was interrupted and redone; its create key made it one object.
    assert [e["engine_id"] for e in starts(probe, stack.id, "r0")] == [victim.name,
                                                                       holder.name]
    assert_exactly_once(probe, stack.id, 3)
    assert_silent_since(probe, stack.id, victim, killed)


@on("postgresql")
def test_kill_between_actions(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack = engine.create_stack(f"k3-{uuid.uuid4().hex[:6]}", chain(1.5, 0.5, 0.5))
    r1 = next(r for r in probe.resources(stack.id) if r["name"] == "r1")
    with probe.row_locks([r1["id"]]):
        done = wait_for(lambda: event_seen(probe, stack.id, "r0", "CREATE", "COMPLETE"), 30,
                        what="r0 to complete")
        wait_for(lambda: probe.lock_waiters() >= 1, 30, what="r1's lock to be requested")
        victim = cluster.conductors[done["engine_id"]]
        cluster.kill(victim)
        killed_at, killed = time.monotonic(), utcnow()
    holder, took = takeover(cluster, probe, stack.id, victim, killed_at)
    final = engine.wait(stack.id, timeout=60)
    print(f"killed between actions: {holder.name} took over after {took:.1f}s")
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    # What was done stays done: r0 is not created again; r1 is started once.
    assert [e["engine_id"] for e in starts(probe, stack.id, "r0")] == [victim.name]
    assert [e["engine_id"] for e in starts(probe, stack.id, "r1")] == [holder.name]
    assert_exactly_once(probe, stack.id, 3)
    assert_silent_since(probe, stack.id, victim, killed)


@on("mysql")
def test_kill_during_rollback(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack = engine.create_stack(f"k4-{uuid.uuid4().hex[:6]}",
                                chain(0.3, 0.3, 0.3, fail_last=True, delete_wait=2.5))
    deleting = wait_for(lambda: event_seen(probe, stack.id, "r1", "DELETE", "IN_PROGRESS"),
                        30, what="the rollback to delete r1")
    victim = cluster.conductors[deleting["engine_id"]]
    cluster.kill(victim)
    killed_at, killed = time.monotonic(), utcnow()
    holder, took = takeover(cluster, probe, stack.id, victim, killed_at)
    final = engine.wait(stack.id, timeout=60)
    print(f"killed during rollback: {holder.name} took over after {took:.1f}s")
    assert (final.action, final.status) == ("ROLLBACK", "COMPLETE"), final.status_reason
    failed = event_seen(probe, stack.id, "r2", "CREATE", "FAILED")
    assert "Test Resource failed" in failed["status_reason"]
    # The new owner went on rolling back from the journal: nothing was
    # created again, the interrupted delete was finished, then r0's.
    for name in ("r0", "r1", "r2"):
        assert len(starts(probe, stack.id, name)) == 1, name
    assert [e["engine_id"] for e in starts(probe, stack.id, "r1", "DELETE")] == [
        victim.name, holder.name]
    assert [e["engine_id"] for e in starts(probe, stack.id, "r0", "DELETE")] == [holder.name]
    assert_exactly_once(probe, stack.id, 0)
    assert_silent_since(probe, stack.id, victim, killed)


def _pause_mid_action(cluster, probe, engine, template):
    stack = engine.create_stack(f"p-{uuid.uuid4().hex[:6]}", template)
    first = wait_for(lambda: event_seen(probe, stack.id, "r0", "CREATE", "IN_PROGRESS"), 30,
                     what="r0 to start")
    paused = cluster.conductors[first["engine_id"]]
    paused.signal(signal.SIGSTOP)
    return stack, paused, time.monotonic(), utcnow()


@on("postgresql")
def test_paused_conductor_wakes_while_the_new_owner_runs(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack, paused, stopped_at, stopped = _pause_mid_action(cluster, probe, engine,
                                                           chain(2.5, 3, 0.5))
    holder, took = takeover(cluster, probe, stack.id, paused, stopped_at)
    print(f"paused mid-action: {holder.name} took over after {took:.1f}s")
    # Wake it while the new owner is in the middle of the stack.
    wait_for(lambda: event_seen(probe, stack.id, "r1", "CREATE", "IN_PROGRESS"), 30,
             what="the new owner to reach r1")
    paused.signal(signal.SIGCONT)
    final = engine.wait(stack.id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    # The woken conductor noticed, stopped, and serves again under a new session.
    wait_for(lambda: "session expired" in paused.log(), 30, what="the session loss to be seen")
    cluster.wait_registered(paused)
    settled = snapshot(probe, stack.id)
    time.sleep(2)
    assert snapshot(probe, stack.id) == settled
    assert_silent_since(probe, stack.id, paused, stopped)
    assert [e["engine_id"] for e in starts(probe, stack.id, "r0")] == [paused.name,
                                                                       holder.name]
    for name in ("r1", "r2"):
        assert [e["engine_id"] for e in starts(probe, stack.id, name)] == [holder.name]
    assert_exactly_once(probe, stack.id, 3)


@on("mysql")
def test_paused_conductor_wakes_after_the_new_owner_finished(cluster, probe):
    cluster.start_many(["c1", "c2", "c3"])
    engine = cluster.engine()
    stack, paused, stopped_at, stopped = _pause_mid_action(cluster, probe, engine,
                                                           chain(3, 0.5, 0.5))
    holder, took = takeover(cluster, probe, stack.id, paused, stopped_at)
    print(f"paused mid-action: {holder.name} took over after {took:.1f}s")
    final = engine.wait(stack.id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
    settled = snapshot(probe, stack.id)
    paused.signal(signal.SIGCONT)
    # It finishes the wait it was paused in, then finds itself fenced off:
    # no physical object, no resource or stack write, no event.
    wait_for(lambda: "session expired" in paused.log(), 30, what="the session loss to be seen")
    cluster.wait_registered(paused)
    time.sleep(3)
    assert snapshot(probe, stack.id) == settled
    assert_silent_since(probe, stack.id, paused, stopped)
    assert_exactly_once(probe, stack.id, 3)


@on("mysql")
def test_stack_whose_conductors_all_died_resumes_when_one_returns(cluster, probe):
    conductors = cluster.start_many(["c1", "c2", "c3"], job_slots=1)
    engine = cluster.engine()
    stacks = [engine.create_stack(f"k6-{uuid.uuid4().hex[:6]}", chain(2, 0.5))
              for _ in range(2)]
    for stack in stacks:
        wait_for(lambda s=stack: event_seen(probe, s.id, "r0", "CREATE", "IN_PROGRESS"), 30,
                 what="both stacks to start")
    for conductor in conductors:
        cluster.kill(conductor)
    killed = utcnow()
    time.sleep(SESSION_TIMEOUT + 2)
    for stack in stacks:
        assert probe.stack(stack.id)["status"] == "IN_PROGRESS"
    assert len(cluster.jobs()) == 2
    cluster.start("c4")
    for stack in stacks:
        final = engine.wait(stack.id, timeout=60)
        assert (final.action, final.status) == ("CREATE", "COMPLETE"), final.status_reason
        assert_exactly_once(probe, stack.id, 2)
        for conductor in conductors:
            assert_silent_since(probe, stack.id, conductor, killed)


@on("postgresql")
def test_job_that_keeps_killing_its_conductor_gives_up(cluster, probe):
    conductors = cluster.start_many(["c1", "c2"], max_attempts=2)
    engine = cluster.engine()
    stack = engine.create_stack(f"k7-{uuid.uuid4().hex[:6]}", chain(60))
    victims = []
    for attempt in (1, 2):
        # Whoever claims it dies in the middle of it, as if the job crashed it.
        def started(n=attempt):
            found = starts(probe, stack.id, "r0")
            return len(found) == n and found[-1]

        event = wait_for(started, 60, what=f"attempt {attempt} to start")
        victim = cluster.conductors[event["engine_id"]]
        cluster.kill(victim)
        victims.append(victim)
        conductors.append(cluster.start(f"c{len(conductors) + 1}", max_attempts=2))
    final = engine.wait(stack.id, timeout=60)
    assert (final.action, final.status) == ("CREATE", "FAILED")
    assert "gave up after 2 attempts" in final.status_reason
    assert len(starts(probe, stack.id, "r0")) == 2
    wait_for(lambda: cluster.jobs() == [], 10, what="the job to leave the board")
    # The operator deletes it; the dead runs' locks are taken over at once.
    final = engine.wait(engine.delete_stack(stack.id).id, timeout=60)
    assert (final.action, final.status) == ("DELETE", "COMPLETE"), final.status_reason
    assert [o for o in probe.physical(stack.id) if o["deleted_at"] is None] == []
