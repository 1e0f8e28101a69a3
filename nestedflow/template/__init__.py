"""HOT parsing, parameters, validation; ``functions`` is a package by
family (``core``, ``strings``, ``data``, ``conditions``, ``expressions`` for
yaql) whose ``versions`` module holds Heat's function table of every
``heat_template_version``."""
