"""``OS::Heat::None``: a placeholder that accepts any properties and does nothing."""

from nestedflow.resources import base


class NoneResource(base.DatabaseOnlyResource):
    """Heat's null resource: used to disable a type through the registry.

    It has no physical object; its physical id is derived from the create
    key so a re-run create returns the same id.
    """

    #: No schema: Heat's None ignores whatever properties the replaced type had.
    properties_schema = None
    #: Heat's NoneResource answers every attribute with None (its
    #: get_attribute override), so any get_attr of it validates.
    dynamic_attributes = True
