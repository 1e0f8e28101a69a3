"""Heat's ``heat.engine.hot.parameters``: the HOT parameter schema names a
plugin may use (``OS::Heat::Value`` lists ``HOTParamSchema.TYPES``)."""

from nestedflow.resources.heat_compat import constraints


class HOTParamSchema(constraints.Schema):
    KEYS = (TYPE, DESCRIPTION, DEFAULT, SCHEMA, CONSTRAINTS, HIDDEN, LABEL, IMMUTABLE) = (
        "type", "description", "default", "schema", "constraints", "hidden", "label",
        "immutable")
    # Parameters spell the list type comma_delimited_list and the map json.
    TYPES = (STRING, NUMBER, LIST, MAP, BOOLEAN) = (
        "string", "number", "comma_delimited_list", "json", "boolean")
