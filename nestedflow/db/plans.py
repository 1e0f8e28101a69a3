"""Plans of re-run and continue traversals (table ``traversal_plans``).

A job carries only the stack, traversal and action; a traversal that runs
part of a stack (a re-run) or picks a stopped create up (a continue) keeps
what it acts on here, stored by :meth:`nestedflow.db.api.Database.begin_traversal`
in the transaction that starts the traversal.
"""

import dataclasses

import sqlalchemy as sa

from nestedflow import exceptions, states
from nestedflow.db import models


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a planned traversal acts on."""

    #: states.RERUN or states.CONTINUE: the action its job is dispatched as.
    action: str
    #: Names of the resources to re-run (the selection already expanded).
    resources: tuple = ()
    checks_only: bool = False

    @property
    def kind(self):
        """As stored: "rerun" or "continue"."""
        return self.action.lower()


def add(session, stack_id, traversal_id, plan):
    """Store ``plan`` in ``session``'s transaction (before the stack's row
    changes: a conductor never claims a traversal without its plan)."""
    if plan.action not in (states.RERUN, states.CONTINUE):
        raise ValueError(f"not a planned action: {plan.action!r}")
    session.add(models.TraversalPlan(
        traversal_id=traversal_id, stack_id=stack_id, kind=plan.kind,
        resources=list(plan.resources), checks_only=bool(plan.checks_only)))
    session.flush()


def get_plan(db, traversal_id):
    with db.reader() as session:
        plan = session.scalars(sa.select(models.TraversalPlan).where(
            models.TraversalPlan.traversal_id == traversal_id)).one_or_none()
    if plan is None:
        raise exceptions.NestedflowError(f"traversal {traversal_id} has no plan")
    return plan
