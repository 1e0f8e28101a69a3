"""nestedflow: Heat-style stacks compiled to OpenStack TaskFlow graph flows.

The public surface (DESIGN.md section 3)::

    engine = nestedflow.Engine(db_url=None, jobboard_url=None, transport_url=None)
    stack = engine.create_stack(name, template, ...)
    engine.wait(stack.id)
"""

import warnings

# taskflow imports oslo.utils' eventlet helper at import time; the warning is
# about a dependency of a dependency and tells nestedflow's users nothing.
warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")

from nestedflow import exceptions  # noqa: E402
from nestedflow.engine.service import Engine  # noqa: E402
from nestedflow.engine.views import Event, Resource, Stack  # noqa: E402

__all__ = ["Engine", "Event", "Resource", "Stack", "exceptions"]
