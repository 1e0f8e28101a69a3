"""Heat's resource plugin API on nestedflow (doc/source/plugins.rst, "Heat
resource plugins"): a plugin file written for Heat runs unchanged, loaded
from ``[heat_compat] plugin_dirs`` (:mod:`.plugin_dirs`) with its
``heat.*`` imports served by these modules through the import shim
(:mod:`.shim`). A plugin may also import them by their own names::

    from nestedflow.resources.heat_compat import (
        attributes, constraints, exception, properties, resource, support)

``resource.Resource`` is :class:`HeatStyleResource`.
"""

from nestedflow.resources.heat_compat.resource import HeatStyleResource

__all__ = ["HeatStyleResource"]
