"""Heat's ``external_id``: a resource that adopts an object made elsewhere.

As heat/engine/resource.py: create adopts the given id instead of creating
(the properties are not used), an update that changes the id is refused
("Update to property external_id of NAME (TYPE) is not supported") and any
other update does nothing, and deleting the stack leaves the object alone
(hot_spec: "resource won't be deleted by heat when stack is deleted").
Attributes and ``get_resource`` come from the type's plugin, whose physical
id is the external one.
"""

from nestedflow import exceptions

#: Where the adopted id is kept in the row's plugin data, so that a delete
#: after the template dropped the resource still knows not to delete it.
DATA_KEY = "external_id"


class ExternalResource:
    """Wraps the plugin of a resource that has an ``external_id``."""

    #: Adopting and forgetting change nothing outside the database.
    side_effects = False

    def __init__(self, plugin, external_id):
        self._plugin = plugin
        self._external_id = external_id

    def __getattr__(self, name):
        # Everything not about the object's life cycle is the plugin's.
        return getattr(self._plugin, name)

    def create(self):
        self._plugin.context.physical_id = self._external_id
        return self._external_id

    def update(self, new_properties, old_properties):
        pass  # the engine refuses a changed id first (unchanged_on_update)

    def delete(self):
        """Forgets the object: it was not made here (Heat leaves it too)."""

    # Checking, suspending and resuming an adopted object are no-ops too.
    check = suspend = resume = delete

    def stored_data(self):
        return {**(self._plugin.stored_data() or {}), DATA_KEY: self._external_id}


def adopted(plugin, external_id):
    """``plugin`` itself, or wrapped when the resource adopts ``external_id``."""
    stored = (plugin.context.data or {}).get(DATA_KEY)
    external_id = external_id if external_id is not None else stored
    return plugin if external_id is None else ExternalResource(plugin, external_id)


def unchanged_on_update(name, type_name, stored_data, external_id):
    """Whether an update leaves the resource alone: True when it adopts the
    same id as before (Heat skips such updates whatever the properties);
    raises NotSupported when it adopts another id, or starts or stops
    adopting one; False for an ordinary resource."""
    adopted = (stored_data or {}).get(DATA_KEY)
    if adopted is None and external_id is None:
        return False
    if adopted != external_id:
        raise exceptions.NotSupported(
            f"Update to property external_id of {name} ({type_name})")
    return True
