"""Heat's ``heat.engine.status.ResourceStatus``: the action and status
names a plugin reads as ``self.CREATE``, ``self.COMPLETE``... (nestedflow's
own, :mod:`nestedflow.states`, spelled as Heat spells them)."""

from nestedflow import states


class ResourceStatus:
    __slots__ = ()

    ACTIONS = (INIT, CREATE, DELETE, UPDATE, ROLLBACK, SUSPEND, RESUME, ADOPT, SNAPSHOT,
               CHECK) = (states.INIT, states.CREATE, states.DELETE, states.UPDATE,
                         states.ROLLBACK, states.SUSPEND, states.RESUME, "ADOPT", "SNAPSHOT",
                         states.CHECK)
    STATUSES = (IN_PROGRESS, FAILED, COMPLETE) = (states.IN_PROGRESS, states.FAILED,
                                                 states.COMPLETE)
