"""A traversal as a TaskFlow flow: ``factories`` builds it from the stored
rows, ``tasks`` (one module per action), ``scope`` (the state the tasks of
one run share), ``check_runner`` (the pre- and post-checks of an action),
``runner`` runs it on the adapter's engine with the journal; ``runtime``
is what a process shares with them."""
