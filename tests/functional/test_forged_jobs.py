"""Forged and malformed jobs on the jobboard are refused before anything runs.

Issue 32: a job is checked against the job schema
(nestedflow.dispatch.job_schema) and against the database -- its stack must
exist and its traversal must be the stack's current one -- before the
conductor counts an attempt or runs anything. A refused job is logged,
moved to the trash with the reason and never retried. One test per kind,
each against a real conductor process, ZooKeeper and PostgreSQL.
"""

import uuid

import pytest
from conductor_cluster import wait_for

pytestmark = pytest.mark.functional

TRAVERSAL = "nestedflow.flows.factories.stack_traversal"


@pytest.fixture
def cluster_db_url(pg_url):
    """PostgreSQL only: the checks read one stack row, the same everywhere."""
    return pg_url


def _forged_details(kind, victim_id, current):
    """The details of a job of ``kind`` aimed at the settled stack ``victim_id``."""
    if kind == "unknown stack":
        return {"factory": TRAVERSAL, "kwargs": {
            "stack_id": str(uuid.uuid4()), "traversal_id": str(uuid.uuid4()),
            "action": "CREATE"}}
    if kind == "not the current traversal":
        return {"factory": TRAVERSAL, "kwargs": {
            "stack_id": victim_id, "traversal_id": str(uuid.uuid4()), "action": "DELETE"}}
    # A field of the wrong type: unchecked, the conductor's attempt counter
    # would fail on it and hand the job back -- again and again.
    return {"factory": TRAVERSAL, "attempts": "many", "kwargs": {
        "stack_id": victim_id, "traversal_id": current, "action": "DELETE"}}


EXPECTED = {
    "unknown stack": "no longer exists (or never did)",
    "not the current traversal": "is not the current traversal of stack",
    "wrong type": "details.attempts: 'many' is not of type 'integer'",
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_forged_job_refused_and_trashed_nothing_run(cluster, probe, kind):
    conductor = cluster.start("c1")
    engine = cluster.engine()
    victim = engine.create_stack(f"victim-{uuid.uuid4().hex[:6]}", {
        "heat_template_version": "2018-08-31",
        "resources": {"x": {"type": "OS::Heat::TestResource"}}})
    victim = engine.wait(victim.id, timeout=60)
    wait_for(lambda: cluster.jobs() == [], 30, what="the create job to be consumed")
    row = probe.stack(victim.id)
    events_before = len(probe.events(victim.id))

    job = cluster.post_raw(_forged_details(kind, victim.id, row["current_traversal"]),
                           f"forged {kind}")

    trash = wait_for(lambda: cluster.trash(), 30, what="the forged job in the trash")
    assert list(trash.values())[0]["uuid"] == job.uuid
    reason = list(trash.values())[0]["details"]["refused"]
    assert EXPECTED[kind] in reason, reason
    assert cluster.jobs() == []
    log = conductor.log()
    assert f"job {job.uuid} (forged {kind}) refused and removed from the jobboard" in log
    # Refused before an attempt was counted, and never claimed again.
    assert f"job {job.uuid}: " not in log
    assert "(attempt 2)" not in log
    # Nothing ran: the stack it named is as it was.
    after = probe.stack(victim.id)
    assert (after["action"], after["status"], after["current_traversal"]) == (
        "CREATE", "COMPLETE", row["current_traversal"])
    assert len(probe.events(victim.id)) == events_before
    assert conductor.alive()
