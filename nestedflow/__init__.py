"""nestedflow: Heat-style stacks compiled to OpenStack TaskFlow graph flows.

The public surface (doc/source/user-guide.rst, "Python API")::

    engine = nestedflow.Engine(db_url=None, jobboard_url=None, transport_url=None)
    stack = engine.create_stack(name, template, ...)
    engine.wait(stack.id)
"""

import warnings

# taskflow imports oslo.utils' eventlet helper at import time; the warning is
# about a dependency of a dependency and tells nestedflow's users nothing.
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")

from nestedflow import exceptions  # noqa: E402

__all__ = ["Engine", "Event", "Resource", "Stack", "exceptions"]

# Imported on first use (PEP 562): the engine pulls in TaskFlow, SQLAlchemy
# and oslo.messaging, which a command line answering ``--help`` or a
# conductor listing never needs.
_LAZY = {
    "Engine": "nestedflow.engine.service",
    "Event": "nestedflow.engine.views",
    "Resource": "nestedflow.engine.views",
    "Stack": "nestedflow.engine.views",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nestedflow' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
