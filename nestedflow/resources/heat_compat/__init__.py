"""Heat's resource plugin API on nestedflow: port a Heat plugin by changing
its imports (doc/source/embedding.rst, "Porting a Heat plugin")::

    from heat.common import exception                 # before
    from heat.engine import attributes, constraints, properties, resource

    from nestedflow.resources.heat_compat import (     # after
        attributes, constraints, exception, properties, resource)

``resource.Resource`` is :class:`HeatStyleResource`.
"""

from nestedflow.resources.heat_compat.resource import HeatStyleResource

__all__ = ["HeatStyleResource"]
