"""Plans of re-run and continue traversals (table ``traversal_plans``)."""

import sqlalchemy as sa

from nestedflow import exceptions, states
from nestedflow.db import models


def begin_with_plan(db, stack, traversal_id, action, kind, resources, checks_only=False,
                    reason="", **values):
    """Store the plan and take the stack over for its traversal, in one
    transaction: a conductor never claims a traversal without its plan."""
    with db.writer() as session:
        session.add(models.TraversalPlan(
            traversal_id=traversal_id, stack_id=stack.id, kind=kind,
            resources=list(resources), checks_only=bool(checks_only)))
        session.flush()
        db._cas_traversal(session, stack.id, stack.current_traversal, traversal_id, action,
                          {"status_reason": reason, **values})
    db._changed(stack.id, action, states.IN_PROGRESS)


def get_plan(db, traversal_id):
    with db.reader() as session:
        plan = session.scalars(sa.select(models.TraversalPlan).where(
            models.TraversalPlan.traversal_id == traversal_id)).one_or_none()
    if plan is None:
        raise exceptions.NestedflowError(f"traversal {traversal_id} has no plan")
    return plan
