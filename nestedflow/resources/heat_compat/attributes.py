"""Heat's ``heat.engine.attributes``: ``Schema(description=None,
support_status=None, cache_mode=None, type=None)``, the base attribute
``show`` and ``select_from_attribute``."""

from nestedflow.properties import schema as nf_schema
from nestedflow.resources.heat_compat import constraints

BASE_ATTRIBUTES = (SHOW_ATTR,) = ("show",)
ALL_ATTRIBUTES = "*"


class Schema(constraints.Schema, nf_schema.Attribute):
    # Heat's cache modes: nestedflow resolves attributes once, after each
    # action, whatever the mode says.
    CACHE_MODES = (CACHE_LOCAL, CACHE_NONE) = ("cache_local", "cache_none")

    def __init__(self, description=None, support_status=None, cache_mode=CACHE_LOCAL,
                 type=None):
        super().__init__(description or "", type=self.nestedflow_type(type))
        self.support_status = support_status
        self.cache_mode = cache_mode


def select_from_attribute(attribute_value, path):
    """The part of ``attribute_value`` that ``path`` (keys and indexes) names,
    or None where it does not exist (Heat's function of the same name)."""
    value = attribute_value
    for key in path or ():
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value
