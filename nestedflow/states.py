"""The actions and statuses of stacks and resources, as stored and shown.

A stack's or a resource's state is an action and a status
(``CREATE_COMPLETE``), the names Heat uses (``heat.engine.resource.Resource``
and ``heat.engine.stack.Stack``: ``ACTIONS`` and ``STATUSES``).
"""

#: No action yet: a resource row whose object was never created.
INIT = "INIT"
CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
#: The convergence pass of a rollback (an update back to the previous template).
ROLLBACK = "ROLLBACK"
SUSPEND = "SUSPEND"
RESUME = "RESUME"
CHECK = "CHECK"
#: Only in stack-change notifications: a cancel was requested.
CANCEL = "CANCEL"
#: A create that takes over existing objects (Heat's ``Stack.adopt``).
ADOPT = "ADOPT"
#: An update back to a snapshot (Heat's ``Stack.restore``:
#: ``update(newstack, action=RESTORE)``).
RESTORE = "RESTORE"

#: What a traversal that runs a stored plan (``db.plans``) is dispatched
#: as: a partial re-run, the continuation of a stopped create. Job and
#: dispatch actions only: the stack shows the action the plan runs as
#: (UPDATE or CHECK for a re-run, CREATE for a continue).
RERUN = "RERUN"
CONTINUE = "CONTINUE"

ACTIONS = (INIT, CREATE, UPDATE, DELETE, ROLLBACK, SUSPEND, RESUME, CHECK, ADOPT, RESTORE)

#: Stack actions that run as another one's traversal: the stack shows its
#: own action (ADOPT_COMPLETE, as Heat) while the flow creates or updates.
RUNS_AS = {ADOPT: CREATE, RESTORE: UPDATE}

IN_PROGRESS = "IN_PROGRESS"
COMPLETE = "COMPLETE"
FAILED = "FAILED"

STATUSES = (IN_PROGRESS, COMPLETE, FAILED)

#: How a cancel ends (``stacks.cancel_requested``): roll back, or just stop.
CANCEL_ROLLBACK = "rollback"
CANCEL_STOP = "stop"
