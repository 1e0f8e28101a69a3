"""``heat.engine.resources.openstack.heat.none_resource`` for plugins that
build on Heat's placeholder type: Heat's removed types
(``OS::Heat::HARestarter``, ``OS::Designate::Domain``...) subclass its
``NoneResource``. Same behaviour as Heat's: takes any property, answers any
attribute with None, is never updated, and deletes nothing unless a
subclass names a client ``entity`` and the object was not a placeholder."""

import uuid

from nestedflow.resources.heat_compat import properties, resource, support


class NoneResource(resource.Resource):
    support_status = support.SupportStatus(version="5.0.0")
    properties_schema = {}
    attributes_schema = {}

    IS_PLACEHOLDER = "is_placeholder"

    def _needs_update(self, after, before, after_props, before_props, prev_resource,
                      check_init_complete=True):
        return False

    def frozen_definition(self):
        return self.t.freeze(properties={})

    def reparse(self, client_resolve=True):
        # Whatever the template gives is ignored: nothing is validated or kept.
        self.properties = properties.Properties(schema={}, data={})
        self.translate_properties(self.properties, client_resolve)

    def validate(self):
        return None

    def handle_create(self):
        self.resource_id_set(str(uuid.uuid4()))
        self.data_set(self.IS_PLACEHOLDER, "True")

    def get_attribute(self, key, *path):
        return None

    def handle_delete(self):
        if not self.data().get(self.IS_PLACEHOLDER):
            return super().handle_delete()
        return self.resource_id
