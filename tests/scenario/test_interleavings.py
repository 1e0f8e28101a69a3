"""Races reproduced exactly with the simulation, and what each must leave.

Every test here steps traversals in an order it chooses (see
nestedflow.testing.stepped); an ``OS::Heat::TestResource`` with
``wait_secs`` pauses *in flight* in the simulation, so a test can hold an
action half-done while another traversal runs.
"""

import pytest

from nestedflow import exceptions
from nestedflow.resources.registry import ResourceRegistry
from nestedflow.testing.stepped import Blocked, Simulation
from scenario import expect, scenarios
from scenario.scenarios import SLOW_REFUSAL, template

ABC = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
""")

SLOW_B = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}, wait_secs: 5}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
""")


def converged(sim, stack_id, template_id=None):
    found = expect.problems(sim.engine, stack_id, template_id)
    assert not found, "\n".join(found)


def resource_events(sim, stack_id, traversal=None, status="COMPLETE"):
    """(action, resource name, row id) of resource events, oldest first."""
    return [(e.action, e.resource_name, e.resource_id)
            for e in sim.engine.db.list_events(stack_id)
            if e.resource_name and e.status == status
            and (traversal is None or e.traversal_id == traversal.traversal_id)]


def objects(sim, stack_id):
    return {o.resource_name: o for o in sim.engine.store.live(stack_id)}


def state(sim, stack_id):
    stack = sim.engine.get_stack(stack_id)
    return f"{stack.action}_{stack.status}"


def test_the_same_schedule_replays_identically(tmp_path):
    """Determinism: one scenario twice, the same work items in the same order."""
    logs = []
    for run in range(2):
        with Simulation(f"sqlite:///{tmp_path}/run{run}.sqlite") as sim:
            scenarios.SimDriver(sim).play(scenarios.by_name("three overlapping traversals"))
            logs.append([(action, name) for action, _, name in sim.log])
    assert logs[0] == logs[1]
    assert len(logs[0]) > 20


def test_update_takes_over_after_two_creates_finished(sim):
    create = sim.create("s", ABC)
    sim.run(create, until="create b")
    assert create.done_names() == ["begin create", "create a #1", "create b #2"]
    t2 = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a2}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
""")
    update = sim.update(create.stack_id, t2)
    # The old traversal starts no new resource action once superseded.
    sim.run_to_end(create)
    assert create.outcome == "REVERTED"
    assert ("CREATE", "c", 3) not in resource_events(sim, create.stack_id, create)
    assert state(sim, create.stack_id) == "UPDATE_IN_PROGRESS"
    sim.run_to_end(update)
    converged(sim, create.stack_id)
    # c was never created by the create: the update created it.
    assert ("CREATE", "c", 3) in resource_events(sim, create.stack_id, update)


def test_action_in_flight_keeps_its_lock_and_result(sim):
    """A resource is never acted on by two traversals at once."""
    create = sim.create("s", SLOW_B)
    item = sim.run(create, until="create b", paused=True)
    assert item.state == "paused" and item.waiting_for == "action"
    update = sim.update(create.stack_id, ABC)  # b's wait_secs removed: update in place
    sim.run(update, until="update a")
    waiting = sim.step(update, "update b")
    assert (waiting.state, waiting.waiting_for) == ("paused", "lock")
    row_b = {r.name: r for r in sim.engine.db.list_resources(create.stack_id)}["b"]
    assert row_b.engine_id.startswith(create.traversal_id)
    with pytest.raises(Blocked, match="update b"):
        sim.run_to_end(update)  # the create's action must finish first
    sim.step(create, "create b")  # the action in flight completes; its result is kept
    assert [e for e in resource_events(sim, create.stack_id, create) if e[1] == "b"] == [
        ("CREATE", "b", 2)]
    sim.run_to_end(update, create)
    assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
    converged(sim, create.stack_id)
    # The update acted on b only after the create's action on it completed.
    events = [(e.action, e.status, e.traversal_id)
              for e in sim.engine.db.list_events(create.stack_id) if e.resource_name == "b"]
    create_done = events.index(("CREATE", "COMPLETE", create.traversal_id))
    update_start = events.index(("UPDATE", "IN_PROGRESS", update.traversal_id))
    assert create_done < update_start


INVERT_1 = scenarios.by_name("replacement that inverts dependencies").templates["T1"]
INVERT_2 = scenarios.by_name("replacement that inverts dependencies").templates["T2"]


def test_cleanup_follows_the_graph_the_rows_were_created_under(sim):
    create = sim.create("s", INVERT_1)
    sim.run_to_end(create)
    old = objects(sim, create.stack_id)
    update = sim.update(create.stack_id, INVERT_2)
    sim.run_to_end(update)
    converged(sim, create.stack_id)
    deletes = [(name, row) for action, name, row in resource_events(sim, create.stack_id,
                                                                        update)
               if action == "DELETE"]
    # T1: b needed a, so old b goes first -- although T2 has a needing b.
    assert deletes == [("b", 2), ("a", 1)]
    creates = [name for action, name, _ in resource_events(sim, create.stack_id, update)
               if action == "CREATE"]
    assert creates == ["b", "a"]  # replacements in T2's order
    new = objects(sim, create.stack_id)
    assert new["a"].properties["value"] == new["b"].id
    assert {o.id for o in old.values()}.isdisjoint(o.id for o in new.values())


def test_update_without_change_acts_on_nothing(sim):
    create = sim.create("s", ABC)
    sim.run_to_end(create)
    before = {o.id: (o.properties, o.updated_at) for o in sim.engine.store.live(
        create.stack_id)}
    update = sim.update(create.stack_id, ABC)
    sim.run_to_end(update)
    assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
    assert resource_events(sim, create.stack_id, update, status="IN_PROGRESS") == []
    after = {o.id: (o.properties, o.updated_at) for o in sim.engine.store.live(
        create.stack_id)}
    assert after == before
    converged(sim, create.stack_id)


def test_second_update_cleans_up_the_first_ones_old_copy(sim):
    scenario = scenarios.by_name("second update before the first finished its cleanup")
    t1, t2, t3 = (scenario.templates[k] for k in ("T1", "T2", "T3"))
    create = sim.create("s", t1)
    sim.run_to_end(create)
    original_b = objects(sim, create.stack_id)["b"]
    update = sim.update(create.stack_id, t2)
    sim.run(update, until="delete c")
    # b was replaced; its old copy waits for the cleanup the update never finishes.
    live = {o.id for o in sim.engine.store.live(create.stack_id)}
    assert original_b.id in live
    update2 = sim.update(create.stack_id, t3)
    sim.settle()
    assert update.outcome == "REVERTED" and update2.outcome == "SUCCESS"
    assert original_b.id not in {o.id for o in sim.engine.store.live(create.stack_id)}
    converged(sim, create.stack_id)


REPLACE_SLOW = template("""
resources:
  a:
    type: OS::Heat::TestResource
    properties: {value: a2, update_replace_value: r2, action_wait_secs: {create: 5}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
""")
REPLACE_AGAIN = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a3, update_replace_value: r3}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
""")
SIMPLE = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
""")


def test_replacement_in_flight_is_replaced_again_by_the_newer_update(sim):
    """The old traversal's replacement is half made when the new flow is
    built; the new one replaces it again and must delete it."""
    create = sim.create("s", SIMPLE)
    sim.run_to_end(create)
    update = sim.update(create.stack_id, REPLACE_SLOW)
    sim.run(update, until="update a", paused=True)  # creating the replacement a'
    update2 = sim.update(create.stack_id, REPLACE_AGAIN)
    sim.start(update2)  # its flow knows rows #1 and #2 only
    sim.step(update, "update a")  # a' created and made current
    rows = sim.engine.db.list_all_resources(create.stack_id)
    replacement = [r for r in rows if r.name == "a" and r.current][0]
    assert replacement.id not in (1, 2)
    sim.settle()
    assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
    converged(sim, create.stack_id)
    gone = sim.engine.db.get_resource(replacement.id)
    assert (gone.action, gone.status, gone.current) == ("DELETE", "COMPLETE", False)


def test_replacement_in_flight_when_the_newer_flow_was_built_is_kept(sim):
    """Found by the property test: the newer flow saw the half-made
    replacement as an old version to delete; it became current meanwhile."""
    create = sim.create("s", SIMPLE)
    sim.run_to_end(create)
    update = sim.update(create.stack_id, REPLACE_SLOW)
    sim.run(update, until="update a", paused=True)  # row #3 made, its create in flight
    update2 = sim.update(create.stack_id, REPLACE_SLOW)  # the same template again
    sim.start(update2)
    assert "delete a #3" in update2.task_names()  # an old version, as far as it knows
    sim.step(update, "update a")  # #3 created and swapped in: the current version
    sim.settle()
    assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
    converged(sim, create.stack_id)
    assert {r.name: r.id for r in sim.engine.db.list_resources(create.stack_id)}["a"] == 3


def slow_refusal(value):
    return template(f"""
resources:
  a: {{type: Test::SlowToRefuse, properties: {{value: a, update_replace_value: {value}}}}}
  b: {{type: OS::Heat::TestResource, properties: {{value: {{get_resource: a}}}}}}
""")


def test_replacement_made_after_the_newer_flow_was_built_is_swept(tmp_path):
    """The older update's action was in flight when the newer flow was built;
    only afterwards did it create a replacement (a row the newer flow cannot
    know). The newer update replaces it again, and its final sweep deletes it."""
    registry = ResourceRegistry.for_testing(SLOW_REFUSAL)
    with Simulation(f"sqlite:///{tmp_path}/sweep.sqlite", registry=registry) as sim:
        create = sim.create("s", slow_refusal("p1"))
        sim.run_to_end(create)
        update = sim.update(create.stack_id, slow_refusal("p2"))
        sim.run(update, until="update a", paused=True)  # no replacement row yet
        update2 = sim.update(create.stack_id, slow_refusal("p3"))
        sim.start(update2)
        sim.step(update, "update a")  # UpdateReplace: row #3 created and swapped in
        assert not any("#3" in name for name in update2.task_names())
        sim.settle()
        assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
        converged(sim, create.stack_id)
        swept = sim.engine.db.get_resource(3)
        assert (swept.action, swept.status, swept.current) == ("DELETE", "COMPLETE", False)


def test_delete_built_before_a_replacement_existed_leaves_nothing(sim):
    create = sim.create("s", SIMPLE)
    sim.run_to_end(create)
    update = sim.update(create.stack_id, REPLACE_SLOW)
    sim.run(update, until="update a", paused=True)
    delete = sim.delete(create.stack_id)
    sim.start(delete)
    sim.step(update, "update a")
    sim.settle()
    assert not expect.deleted_problems(sim.engine, create.stack_id)


ROLLBACK_ALL = scenarios.by_name("rollback of every kind at once").templates["T2"]
ABCD = scenarios.by_name("rollback of every kind at once").templates["T1"]


def test_rollback_restores_every_kind_of_change(sim):
    create = sim.create("s", ABCD)
    sim.run_to_end(create)
    before = {o.id: (o.resource_name, o.properties) for o in sim.engine.store.live(
        create.stack_id)}
    update = sim.update(create.stack_id, ROLLBACK_ALL)
    sim.run(update, until="update bad")
    after_failure = objects(sim, create.stack_id)
    assert after_failure["a"].properties["value"] == "a2"  # updated in place
    assert "x" in after_failure  # added
    current_b = {r.name: r for r in sim.engine.db.list_resources(create.stack_id)}["b"]
    assert current_b.replaces == 2  # the swap to the replacement happened
    sim.run_to_end(update)
    assert state(sim, create.stack_id) == "ROLLBACK_COMPLETE"
    stack = sim.engine.db.get_stack(create.stack_id)
    assert stack.raw_template_id == stack.prev_raw_template_id
    # The very same objects as before, with their old properties.
    assert {o.id: (o.resource_name, o.properties) for o in sim.engine.store.live(
        create.stack_id)} == before
    converged(sim, create.stack_id)
    reverts = [n.split(" #")[0] for n in update.done_names() if n.startswith("revert")]
    assert reverts.index("revert update bad") < reverts.index("revert update b")


SLOW_B_AND_D = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}, wait_secs: 5}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_resource: b}}}
  d: {type: OS::Heat::TestResource, properties: {value: d1}}
""")


def test_cancel_without_rollback_waits_for_actions_in_flight(sim):
    create = sim.create("s", SLOW_B_AND_D)
    sim.run(create, until="create b", paused=True)
    sim.cancel(create.stack_id, rollback=False)
    sim.step(create, "create d")  # no new action starts
    # Only the action in flight is left to execute (and reverts, which are
    # no-ops without rollback).
    assert [n for n in create.names() if not n.startswith("revert")] == ["create b #2"]
    assert objects(sim, create.stack_id).keys() == {"a"}
    assert state(sim, create.stack_id) == "CREATE_IN_PROGRESS"
    sim.step(create, "create b")  # it finishes, and its result is kept
    sim.run_to_end(create)
    assert state(sim, create.stack_id) == "CREATE_FAILED"
    assert "cancelled" in sim.engine.get_stack(create.stack_id).status_reason
    assert set(objects(sim, create.stack_id)) == {"a", "b"}
    assert not expect.tracked_problems(sim.engine, create.stack_id)
    update = sim.update(create.stack_id, ABC)
    sim.run_to_end(update)
    converged(sim, create.stack_id)


def test_cancel_with_rollback_cuts_the_wait_short_and_reverts(sim):
    create = sim.create("s", SLOW_B)
    sim.run(create, until="create b", paused=True)
    sim.cancel(create.stack_id, rollback=True)
    sim.run_to_end(create)
    assert state(sim, create.stack_id) == "ROLLBACK_COMPLETE"
    assert objects(sim, create.stack_id) == {}
    b = {r.name: r for r in sim.engine.db.list_resources(create.stack_id)}["b"]
    assert b.status == "COMPLETE" and b.engine_id is None


FAILED_REPLACEMENT = template("""
resources:
  a: {type: OS::Heat::TestResource, properties: {value: a1, update_replace_value: r2, fail: true}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, output]}}}
""")


def test_failed_replacement_releases_the_original(sim):
    """A replacement whose create fails must not leave the original locked."""
    create = sim.create("s", SIMPLE)
    sim.run_to_end(create)
    update = sim.update(create.stack_id, FAILED_REPLACEMENT, disable_rollback=True)
    sim.run_to_end(update)
    assert state(sim, create.stack_id) == "UPDATE_FAILED"
    assert not expect.tracked_problems(sim.engine, create.stack_id)
    update2 = sim.update(create.stack_id, REPLACE_AGAIN)
    sim.run_to_end(update2)  # would be Blocked on a leaked lock
    converged(sim, create.stack_id)


def test_failed_replacement_rolls_back(sim):
    create = sim.create("s", SIMPLE)
    sim.run_to_end(create)
    before = {o.id for o in sim.engine.store.live(create.stack_id)}
    update = sim.update(create.stack_id, FAILED_REPLACEMENT)
    sim.run_to_end(update)
    assert state(sim, create.stack_id) == "ROLLBACK_COMPLETE"
    assert {o.id for o in sim.engine.store.live(create.stack_id)} == before
    converged(sim, create.stack_id)


def test_suspend_resume_and_check(sim):
    create = sim.create("s", ABC)
    sim.run_to_end(create)
    suspend = sim.suspend(create.stack_id)
    sim.run_to_end(suspend)
    assert state(sim, create.stack_id) == "SUSPEND_COMPLETE"
    assert [o.state for o in sim.engine.store.live(create.stack_id)] == ["SUSPENDED"] * 3
    order = [n for _, n, _ in resource_events(sim, create.stack_id, suspend)]
    assert order == ["c", "b", "a"]
    resume = sim.resume(create.stack_id)
    sim.run_to_end(resume)
    assert [n for _, n, _ in resource_events(sim, create.stack_id, resume)] == ["a", "b", "c"]
    assert {o.state for o in sim.engine.store.live(create.stack_id)} == {"ACTIVE"}
    check = sim.check(create.stack_id)
    sim.run_to_end(check)
    assert state(sim, create.stack_id) == "CHECK_COMPLETE"
    converged(sim, create.stack_id)
    sim.engine.store.delete(objects(sim, create.stack_id)["b"].id)  # behind our back
    check = sim.check(create.stack_id)
    sim.run_to_end(check)
    stack = sim.engine.get_stack(create.stack_id)
    assert (stack.action, stack.status) == ("CHECK", "FAILED")
    assert "resources.b" in stack.status_reason
    # An update replaces the broken resource (its last action failed).
    update = sim.update(create.stack_id, ABC)
    sim.run_to_end(update)
    converged(sim, create.stack_id)


def test_suspend_refused_while_in_progress(sim):
    create = sim.create("s", ABC)
    with pytest.raises(exceptions.ActionNotAllowed):
        sim.suspend(create.stack_id)
    sim.run_to_end(create)


def test_journal_in_sql_gives_the_same_result(tmp_path):
    with Simulation(f"sqlite:///{tmp_path}/sql.sqlite", persistence="sql") as sim:
        scenarios.SimDriver(sim).play(
            scenarios.by_name("update adds, removes, replaces and updates in place"))


def test_closing_with_traversals_unfinished(tmp_path):
    """Paused and queued work is discarded at close, in the test's thread."""
    sim = Simulation(f"sqlite:///{tmp_path}/abandon.sqlite")
    create = sim.create("s", SLOW_B)
    sim.run(create, until="create b", paused=True)
    update = sim.update(create.stack_id, ABC)
    sim.start(update)
    sim.close()
    assert create.outcome == update.outcome == "abandoned"
    assert all(item.state == "done" for item in create.items + update.items)


def test_rollback_after_superseding_converges_to_the_previous_template(sim):
    """Reverting only undoes this update's actions; the update it superseded
    had not finished, so a ROLLBACK traversal converges to its template."""
    scenario = scenarios.by_name(
        "failing update supersedes one in progress; rollback converges to it")
    t1, t2, t3 = (scenario.templates[k] for k in ("T1", "T2", "T3"))
    create = sim.create("s", t1)
    sim.run_to_end(create)
    update = sim.update(create.stack_id, t2)
    sim.run(update, until="update b")
    failing = sim.update(create.stack_id, t3)
    sim.run_to_end(update, failing)
    rollback = sim.traversals[-1]
    assert rollback.action == "ROLLBACK" and rollback is not failing
    assert state(sim, create.stack_id) == "ROLLBACK_IN_PROGRESS"
    assert "converging to the previous template" in sim.engine.get_stack(
        create.stack_id).status_reason
    sim.run_to_end(rollback)
    assert state(sim, create.stack_id) == "ROLLBACK_COMPLETE"
    stack = sim.engine.db.get_stack(create.stack_id)
    converged(sim, create.stack_id, stack.prev_raw_template_id)


def test_clean_rollback_needs_no_second_traversal(sim):
    create = sim.create("s", ABCD)
    sim.run_to_end(create)
    sim.update(create.stack_id, ROLLBACK_ALL)
    sim.settle()
    assert [t.action for t in sim.traversals] == ["CREATE", "UPDATE"]
    assert state(sim, create.stack_id) == "ROLLBACK_COMPLETE"


def test_resource_retired_by_an_older_cleanup_in_flight_is_brought_back(sim):
    """Found by the property test: an update drops b and is deleting it when a
    newer update that has b again is built; the old delete then retires b's
    row. The newer update re-creates b on that row, which must be current
    again -- not deleted by its own cleanup as a replaced version."""
    with_b = template("""
resources:
  a: {type: OS::Heat::None}
  b: {type: OS::Heat::TestResource, properties: {value: x, wait_secs: 5}}
""")
    without_b = template("""
resources:
  a: {type: OS::Heat::None}
""")
    create = sim.create("s", with_b)
    sim.run_to_end(create)
    drop = sim.update(create.stack_id, without_b)
    deleting = sim.run(drop, until="delete b", paused=True)
    assert (deleting.state, deleting.waiting_for) == ("paused", "action")
    back = sim.update(create.stack_id, with_b)
    sim.run(back, until="begin update")  # built while b's row is still current
    sim.step(drop, "delete b")  # the old delete completes and retires the row
    sim.run_to_end(back, drop)
    assert state(sim, create.stack_id) == "UPDATE_COMPLETE"
    converged(sim, create.stack_id)
    assert "b" in objects(sim, create.stack_id)
