"""``OS::Heat::None``: a placeholder that accepts any properties and does nothing."""

import uuid

from nestedflow.resources import base


class NoneResource(base.Resource):
    """Heat's null resource: used to disable a type through the registry.

    It has no physical object; its physical id is derived from the create
    key so a re-run create returns the same id.
    """

    #: No schema: Heat's None ignores whatever properties the replaced type had.
    properties_schema = None
    side_effects = False
    update_resumable = True
    #: Heat's NoneResource answers every attribute with None (its
    #: get_attribute override), so any get_attr of it validates.
    dynamic_attributes = True

    def create(self):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, self.context.create_key))

    def update(self, new_properties, old_properties):
        self.properties = new_properties

    def delete(self):
        pass

    def check(self):
        pass

    def suspend(self):
        pass

    def resume(self):
        pass
