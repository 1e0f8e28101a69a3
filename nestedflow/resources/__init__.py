"""The resource plugin base class (``base``), the built-in types, their
registry (``registry``: the ``nestedflow.resources`` entry points and Heat's
plugin directories) and Heat's plugin API (``heat_compat``)."""
