"""``OS::Heat::TestResource`` with Heat's properties and behaviour
(heat/engine/resources/openstack/heat/test_resource.py)."""

from nestedflow import exceptions
from nestedflow.properties import constraints
from nestedflow.properties.schema import Attribute, Property, Types
from nestedflow.resources import base


class TestResource(base.StoredObjectResource):
    """A resource that waits, fails or demands replacement on request."""

    properties_schema = {
        "value": Property(Types.STRING, "The input string stored in the object.",
                          default="test_string", update_allowed=True),
        "update_replace": Property(Types.BOOLEAN, "Force replacement on update.",
                                   default=False, update_allowed=True),
        "update_replace_value": Property(Types.STRING,
                                         "A value whose change forces replacement.",
                                         update_allowed=True),
        "fail": Property(Types.BOOLEAN, "Fail the create or update action.",
                         default=False, update_allowed=True),
        "client_name": Property(Types.STRING, "Unused: there are no cloud clients to poll.",
                                default="", update_allowed=True),
        "entity_name": Property(Types.STRING, "Unused: there are no cloud clients to poll.",
                                default="", update_allowed=True),
        "wait_secs": Property(Types.NUMBER, "Seconds each action waits (-1 is infinite).",
                              default=0, update_allowed=True),
        "attr_wait_secs": Property(Types.NUMBER, "Seconds reading an attribute waits.",
                                   default=0, update_allowed=True),
        "action_wait_secs": Property(
            Types.MAP, "Seconds to wait per action (create, update, delete); "
            "overrides wait_secs.",
            update_allowed=True,
            schema={
                "create": Property(Types.NUMBER),
                "update": Property(Types.NUMBER),
                "delete": Property(Types.NUMBER),
            },
        ),
        "constraint_prop_secs": Property(
            Types.NUMBER, "Seconds validating this property waits (the test_constr "
            "custom constraint).", default=0, update_allowed=True,
            constraints=[constraints.Custom("test_constr")]),
    }
    attributes_schema = {
        "output": Attribute("The string that was stored (the value property)."),
    }

    def _wait(self, action, properties):
        per_action = properties.get("action_wait_secs") or {}
        seconds = per_action.get(action)
        if seconds is None:
            seconds = properties.get("wait_secs") or 0
        if seconds < 0:
            # Heat: a negative wait never ends; the stack's timeout or a
            # cancel stops it (sleep raises once the work is no longer ours).
            while True:
                self.context.sleep(3600)
        self.context.sleep(float(seconds))

    def _maybe_fail(self, properties):
        if properties.get("fail"):
            raise ValueError("Test Resource failed")

    def create(self):
        self._wait("create", self.properties)
        self._maybe_fail(self.properties)
        return super().create()

    @classmethod
    def needs_replace_with_prop_diff(cls, changed, new_properties, old_properties):
        # Heat's TestResource: update_replace replaces only when the value
        # changes; a changed update_replace_value always replaces.
        value_changed = new_properties.get("value") != old_properties.get("value")
        return bool(value_changed and new_properties.get("update_replace")) or (
            new_properties.get("update_replace_value")
            != old_properties.get("update_replace_value"))

    def update(self, new_properties, old_properties):
        if self.needs_replace_with_prop_diff(set(), new_properties, old_properties):
            raise exceptions.UpdateReplace(self.name)
        self._wait("update", new_properties)
        self._maybe_fail(new_properties)
        super().update(new_properties, old_properties)

    def delete(self):
        self._wait("delete", self.properties)
        super().delete()

    def get_attribute(self, name):
        wait = self.properties.get("attr_wait_secs") or 0
        if wait > 0:
            self.context.sleep(float(wait))
        if name == "output":
            return self.properties.get("value")
        return None
