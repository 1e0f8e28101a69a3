"""Stored results of resource pre- and post-checks (table ``check_results``)."""

import sqlalchemy as sa

from nestedflow import states
from nestedflow.db import models


def record(db, stack_id, result, event=True, engine_id=None):
    """Store one check result and, with ``event``, the stack event showing it
    (both in one transaction: the event never shows a result not kept)."""
    with db.writer() as session:
        session.add(models.CheckResult(**result))
        if event:
            passed = result["status"] == "PASS"
            session.add(models.Event(
                stack_id=stack_id, resource_name=result["resource_name"],
                resource_id=result.get("resource_id"), action=result["action"],
                # A passed check leaves the action in progress; a failed one fails it.
                status=states.IN_PROGRESS if passed else states.FAILED,
                status_reason=f"{result['phase']}-check {result['check_name']!r} "
                f"{result['status']}: {result['message']}",
                traversal_id=result.get("traversal_id"), engine_id=engine_id))


def list_results(db, stack_id, traversal_id=None):
    """The stack's check results, oldest first (one traversal's if given)."""
    query = sa.select(models.CheckResult).where(models.CheckResult.stack_id == stack_id)
    if traversal_id is not None:
        query = query.where(models.CheckResult.traversal_id == traversal_id)
    with db.reader() as session:
        return list(session.scalars(query.order_by(models.CheckResult.id)))
