"""Heat's ``heat.engine.attributes.Schema``: ``Schema(description=None,
support_status=None, cache_mode=None, type=None)``."""

from nestedflow.resources import schema as nf_schema
from nestedflow.resources.heat_compat import properties


class Schema(properties.TypeNames, nf_schema.Attribute):
    # Heat's cache modes: attributes are resolved once, after each action.
    CACHE_LOCAL = "cache_local"
    CACHE_NONE = "cache_none"

    def __init__(self, description=None, support_status=None, cache_mode=None, type=None):
        super().__init__(description or "", type=type or nf_schema.Types.ANY)
        self.support_status = support_status
        self.cache_mode = cache_mode
