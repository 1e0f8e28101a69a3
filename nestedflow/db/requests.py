"""Which request started each traversal (nestedflow.tenancy).

Written once per action started with a request context (nothing without
one), read when events are listed: the event rows themselves, written on
every resource action's path, carry only their traversal id.
"""

import sqlalchemy as sa

from nestedflow.db import models


def record(db, stack_id, traversal_id, request_id):
    with db.writer() as session:
        session.merge(models.TraversalRequest(traversal_id=traversal_id, stack_id=stack_id,
                                              request_id=request_id))


def request_ids(db, stack_id):
    """Traversal id -> request id, for the stack's traversals that have one."""
    with db.reader() as session:
        rows = session.execute(
            sa.select(models.TraversalRequest.traversal_id, models.TraversalRequest.request_id)
            .where(models.TraversalRequest.stack_id == stack_id))
        return dict(rows.all())
