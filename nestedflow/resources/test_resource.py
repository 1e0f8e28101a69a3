"""``OS::Heat::TestResource`` with Heat's properties and behaviour."""

from nestedflow import exceptions
from nestedflow.resources import base
from nestedflow.resources.schema import Attribute, Property, Types


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
        "client_name": Property(Types.STRING, "Unused; kept for Heat compatibility.",
                                default=""),
        "entity_name": Property(Types.STRING, "Unused; kept for Heat compatibility.",
                                default=""),
        "wait_secs": Property(Types.NUMBER, "Seconds each action waits.",
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
        "constraint_prop_secs": Property(Types.NUMBER, "Unused; kept for Heat compatibility.",
                                         default=0, update_allowed=True),
    }
    attributes_schema = {
        "output": Attribute("The string that was stored (the value property)."),
    }

    def _wait(self, action, properties):
        per_action = properties.get("action_wait_secs") or {}
        seconds = per_action.get(action)
        if seconds is None:
            seconds = properties.get("wait_secs") or 0
        self.context.sleep(float(seconds))

    def _maybe_fail(self, properties):
        if properties.get("fail"):
            raise ValueError("Test Resource failed")

    def create(self):
        self._wait("create", self.properties)
        self._maybe_fail(self.properties)
        return super().create()

    def update(self, new_properties, old_properties):
        if new_properties.get("update_replace") or (
            new_properties.get("update_replace_value")
            != old_properties.get("update_replace_value")
        ):
            raise exceptions.UpdateReplace(self.name)
        self._wait("update", new_properties)
        self._maybe_fail(new_properties)
        super().update(new_properties, old_properties)

    def delete(self):
        self._wait("delete", self.properties)
        super().delete()

    def get_attribute(self, name):
        if name == "output":
            return self.properties.get("value")
        return None
