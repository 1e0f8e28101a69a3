"""TaskFlow tasks: one per resource action, plus the traversal's begin and end.

One module per action (:mod:`.create`, :mod:`.converge`, :mod:`.delete`,
:mod:`.actions`), the traversal's first and last task in :mod:`.traversal`,
what they share in :mod:`.base`; the state shared by the tasks of one run
is :class:`nestedflow.flows.scope.TraversalScope`. The ``revert`` handlers
are the rollback.
"""

from nestedflow.flows.tasks.actions import ResourceAction
from nestedflow.flows.tasks.base import (
                                         CLEANED,
                                         SYMBOL,
                                         UNDO,
                                         ResourceTask,
                                         ScopedTask,
                                         is_gone,
                                         output_of,
)
from nestedflow.flows.tasks.converge import ConvergeResource
from nestedflow.flows.tasks.create import CreateResource
from nestedflow.flows.tasks.delete import CleanupReplaced, DeleteResource, delete_resource
from nestedflow.flows.tasks.traversal import (
                                         CONVERGED,
                                         BeginTraversal,
                                         CompleteTraversal,
                                         Converged,
)
from nestedflow.flows.tasks.waves import ConvergeWave, CreateWave, DeleteWave

__all__ = ["CLEANED", "CONVERGED", "SYMBOL", "UNDO", "BeginTraversal", "CleanupReplaced",
           "CompleteTraversal", "ConvergeResource", "ConvergeWave", "Converged",
           "CreateResource", "CreateWave", "DeleteResource", "DeleteWave", "ResourceAction",
           "ResourceTask", "ScopedTask", "delete_resource", "is_gone", "output_of"]
