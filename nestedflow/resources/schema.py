"""Where plugins found the property schema before it moved below both
``template`` and ``resources`` (:mod:`nestedflow.properties.schema`):
re-exported, so a plugin's ``from nestedflow.resources.schema import
Property, Types`` keeps working."""

from nestedflow.properties.schema import *  # noqa: F401, F403
from nestedflow.properties.schema import UNRESOLVED, Attribute, Property, Types  # noqa: F401
