"""cliff commands of the ``nestedflow`` command line, one module per area.

Each class is an entry point of the ``nestedflow.cli`` group in setup.cfg.
Modules here import only cliff and the standard library at the top: cliff
loads every command class to print ``nestedflow --help``.
"""
