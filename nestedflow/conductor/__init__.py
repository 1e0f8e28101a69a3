"""Conductors: daemons that claim stack traversal jobs from a ZooKeeper
jobboard and run them (``nestedflow-conductor``); see :mod:`.service`."""
