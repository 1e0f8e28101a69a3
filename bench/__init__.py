"""nestedflow's benchmark suite: ``python -m bench`` (see ``--help`` and README.md).

Every case runs nestedflow through its public ``Engine`` and, in the same
invocation, the same graph as plain tasks on stock TaskFlow with its stock
SQL persistence (and, where the graph has waits, the critical-path lower
bound), each run in a fresh process; the table shows medians, resources
per second, SQL statements and commits per resource, peak RSS, and the
issue's targets.
"""
