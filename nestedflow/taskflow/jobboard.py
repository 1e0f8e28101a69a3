"""TaskFlow's ZooKeeper jobboard, with the private names nestedflow needs
of it made public.

:class:`nestedflow.dispatch.impl_zookeeper.Board` pins the board's folders
under one deployment's root and lists unclaimed jobs in one read; both
need what TaskFlow keeps private (its trash and entity paths, its job
listing, its client). Here, in the adapter package, each is turned into a
public method or property of :class:`ZookeeperBoard`.

Importing this module imports kazoo (TaskFlow's board needs it), so it is
apart from :mod:`nestedflow.taskflow.compat`: an embedded engine with no
jobboard never loads it. Like that module, it checks at import that
TaskFlow still has every name in :data:`JOBBOARD_NAMES`, and fails naming
the missing one and :data:`~nestedflow.taskflow.compat.SUPPORTED` rather
than let a renamed attribute be set that nothing reads.
"""

from nestedflow import dependency_check
from nestedflow.taskflow.compat import SUPPORTED, exposed

#: (module, class, name) of every private name of TaskFlow's ZooKeeper
#: jobboard used here.
JOBBOARD_NAMES = (
    ("taskflow.jobs.backends.impl_zookeeper", "ZookeeperJobBoard", "_trash_path"),
    ("taskflow.jobs.backends.impl_zookeeper", "ZookeeperJobBoard", "_entity_path"),
    ("taskflow.jobs.backends.impl_zookeeper", "ZookeeperJobBoard", "_fetch_jobs"),
    ("taskflow.jobs.backends.impl_zookeeper", "ZookeeperJobBoard", "_client"),
    ("taskflow.jobs.backends.impl_zookeeper", "ZookeeperJobBoard", "_state_change_listener"),
)

# Before the subclass below is made: a missing name fails here, named.
dependency_check.check(JOBBOARD_NAMES, SUPPORTED, "taskflow")

from taskflow.jobs.backends import impl_zookeeper  # noqa: E402 (checked first)


class ZookeeperBoard(impl_zookeeper.ZookeeperJobBoard):
    """TaskFlow's ZooKeeper jobboard with its folders and listing public."""

    def relocate(self, trash_path, entity_path):
        """Keep trashed jobs and entities under these paths."""
        self._trash_path = trash_path
        self._entity_path = entity_path

    def fetch_jobs(self, ensure_fresh=False):
        """The board's jobs, as TaskFlow last listed them."""
        return self._fetch_jobs(ensure_fresh=ensure_fresh)

    client = exposed("_client", "The board's kazoo client.")
    state_change_listener = exposed(
        "_state_change_listener", "What the board listens to its client's state with.")
