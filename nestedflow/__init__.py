"""nestedflow: Heat-style stacks compiled to OpenStack TaskFlow graph flows.

The public surface (doc/source/user-guide.rst, "Python API")::

    engine = nestedflow.Engine(db_url=None, jobboard_url=None, transport_url=None)
    stack = engine.create_stack(name, template, ...)
    engine.wait(stack.id)
"""

import os
import warnings

# nestedflow never runs green threads, but TaskFlow imports eventlet where it
# is installed (through oslo_utils.eventletutils), and eventlet then imports
# dnspython for its green resolver: 0.2 s of CPU at the start of every
# process. Set before anything imports eventlet; a host that embeds the
# engine and set it itself (or imported eventlet first) keeps its choice.
os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")

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
