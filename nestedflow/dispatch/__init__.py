"""Where a traversal runs: in process (``impl_local``) or posted as a job to
a jobboard (``impl_zookeeper``; its ZooKeeper layout in ``zookeeper``,
readable without TaskFlow), chosen by the scheme of the jobboard URL
through the ``nestedflow.dispatchers`` entry points; the job slots."""
