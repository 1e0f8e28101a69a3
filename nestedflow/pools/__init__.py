"""The threads resource actions run on: a run's worker pool (``workers``)
and the parking of actions that wait (``parking``). Below ``flows``, so that
resource plugins and nested stacks can give their worker up while they wait
without importing the flows that run them."""
