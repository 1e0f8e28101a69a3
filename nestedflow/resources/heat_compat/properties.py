"""Heat's ``heat.engine.properties.Schema``, as nestedflow property schemas.

``Schema(data_type, description=None, default=None, schema=None,
required=False, constraints=None, implemented=True, update_allowed=False,
immutable=False, support_status=None, allow_conversion=False)``: the
arguments Heat's takes. ``implemented``, ``immutable``, ``support_status``
and ``allow_conversion`` are accepted and not used.
"""

from nestedflow.resources import schema as nf_schema


class TypeNames:
    """Heat's type constants (``Schema.STRING``...), spelled as nestedflow's
    types; shared by property and attribute schemas."""

    STRING = nf_schema.Types.STRING
    INTEGER = nf_schema.Types.INTEGER
    NUMBER = nf_schema.Types.NUMBER
    BOOLEAN = nf_schema.Types.BOOLEAN
    MAP = nf_schema.Types.MAP
    LIST = nf_schema.Types.LIST
    ANY = nf_schema.Types.ANY
    TYPES = (STRING, INTEGER, NUMBER, BOOLEAN, MAP, LIST, ANY)


class Schema(TypeNames, nf_schema.Property):

    def __init__(self, data_type, description=None, default=None, schema=None,
                 required=False, constraints=None, implemented=True, update_allowed=False,
                 immutable=False, support_status=None, allow_conversion=False):
        super().__init__(data_type, description or "", required=required, default=default,
                         update_allowed=update_allowed, constraints=constraints or (),
                         schema=schema)
        self.implemented = implemented
        self.immutable = immutable
        self.support_status = support_status
