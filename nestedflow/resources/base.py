"""The resource plugin interface.

A resource type is a subclass of :class:`Resource` registered under the
``nestedflow.resources`` entry-point group with the type name as the entry
point name (``OS::Heat::None = nestedflow.resources.none:NoneResource``).

Every action may run more than once: a task interrupted by a crash is
re-run on resume, and the engine cannot know whether the first run reached
the cloud. Implementations must therefore be idempotent -- use
``context.create_key`` to make a create happen once, and treat deleting a
missing object as success.
"""

import abc
import dataclasses
import threading
import typing

from nestedflow import exceptions


@dataclasses.dataclass
class ActionContext:
    """What a plugin may know about the action it performs."""

    stack_id: str
    stack_name: str
    resource_id: int
    resource_name: str
    type_name: str
    traversal_id: str
    #: Unique per resource version and traversal: the idempotency key of a create.
    create_key: str
    #: The physical object store shared by every process (test resource types).
    store: typing.Any
    physical_id: str | None = None
    #: Data the plugin stored with the resource on an earlier action.
    data: dict = dataclasses.field(default_factory=dict)
    #: Set when the traversal is cancelled or superseded.
    stop_event: threading.Event = dataclasses.field(default_factory=threading.Event)
    still_owner: typing.Callable[[], None] = lambda: None
    #: Child stack operations for nested-stack types (nestedflow.stacks.children).
    children: typing.Any = None
    #: The resource lock holder of this run ("traversal/owner"), when known:
    #: a fencing token for APIs that take one (see StoredObjectResource).
    holder: str | None = None

    def sleep(self, seconds):
        """Wait, but wake up early and stop when this work is no longer ours."""
        if seconds and self.stop_event.wait(seconds):
            self.still_owner()
            raise exceptions.OwnershipLost(
                f"{self.resource_name}: traversal {self.traversal_id} was stopped"
            )


class Resource(abc.ABC):
    """Base class of every resource type.

    Subclasses declare ``properties_schema`` (name ->
    :class:`nestedflow.resources.schema.Property`) and ``attributes_schema``
    (name -> :class:`nestedflow.resources.schema.Attribute`), and implement
    the six actions. ``self.properties`` holds the validated, resolved
    properties of the action being performed.
    """

    properties_schema: typing.ClassVar[dict] = {}
    attributes_schema: typing.ClassVar[dict] = {}
    #: Its actions mostly wait for child stacks (and give their worker up
    #: meanwhile, see :mod:`nestedflow.flows.workers`).
    waits_for_stacks: typing.ClassVar[bool] = False
    #: False for a type whose actions change nothing outside nestedflow's
    #: own database (``OS::Heat::None``; a plugin that only computes or
    #: stores values). The engine then runs each of its creates and deletes
    #: in the transaction that takes the resource lock and records the
    #: action's start and end: one commit instead of two, and nothing to
    #: find after a crash before it.
    side_effects: typing.ClassVar[bool] = True
    #: True when any attribute name is valid (e.g. nested stack outputs).
    dynamic_attributes: typing.ClassVar[bool] = False

    def __init__(self, name, properties, context):
        self.name = name
        self.properties = properties
        self.context = context

    @property
    def physical_id(self):
        return self.context.physical_id

    @abc.abstractmethod
    def create(self):
        """Create the physical object; return its physical id.

        Must be idempotent for one ``context.create_key``.
        """

    @abc.abstractmethod
    def update(self, new_properties, old_properties):
        """Bring the physical object to ``new_properties`` in place.

        Raise :class:`nestedflow.exceptions.UpdateReplace` when that is not
        possible; the engine then creates a replacement and deletes this one
        later. May return a new physical id, or None to keep the current one.
        """

    @abc.abstractmethod
    def delete(self):
        """Delete the physical object; deleting a missing object succeeds."""

    @abc.abstractmethod
    def check(self):
        """Verify the physical object exists and is healthy.

        Raise :class:`nestedflow.exceptions.PhysicalObjectMissing` (or any
        error naming the problem) when it is not.
        """

    @abc.abstractmethod
    def suspend(self):
        """Suspend the physical object (idempotent)."""

    @abc.abstractmethod
    def resume(self):
        """Resume a suspended physical object (idempotent)."""

    def get_attribute(self, name):
        """Value of attribute ``name`` after the last action (None if unknown)."""
        return None

    def reference_id(self):
        """What ``get_resource`` returns: the physical id unless overridden."""
        return self.physical_id

    def stored_data(self):
        """Plugin data to keep with the resource row for later actions."""
        return self.context.data

    @classmethod
    def fingerprint(cls, properties, files, type_name):
        """What else, besides the properties, forces an update when it changes.

        None for most types; nested stacks digest the template file they use.
        """
        return None


class StoredObjectResource(Resource):
    """A resource whose physical object lives in the shared physical store.

    The built-in test types inherit the idempotent lifecycle from here and
    only describe what they keep.
    """

    def object_data(self):
        """Extra data to record with a newly created object."""
        return None

    def create(self):
        row = self.context.store.create(
            self.context.create_key,
            stack_id=self.context.stack_id,
            resource_id=self.context.resource_id,
            resource_name=self.name,
            type_name=self.context.type_name,
            properties=self.properties,
            data=self.object_data(),
            fence=self._fence(),
        )
        self.context.physical_id = row.id
        self.context.data = dict(row.data or {})
        return row.id

    def _fence(self):
        # Only while this run (or, if the engine did not say which, this
        # traversal) still holds the resource lock (see
        # nestedflow.resources.physical): the store is a cloud that takes a
        # fencing token.
        return (self.context.resource_id, self.context.holder or f"{self.context.traversal_id}/")

    def update(self, new_properties, old_properties):
        self.context.store.update(self.physical_id, self.name, fence=self._fence(),
                                  properties=new_properties)
        self.properties = new_properties

    def delete(self):
        physical_id = self.physical_id
        if physical_id is None:
            # A create interrupted before its physical id was recorded may
            # still have made the object: find it by its idempotency key.
            found = self.context.store.find_by_key(self.context.create_key)
            physical_id = found.id if found is not None else None
        if physical_id:
            self.context.store.delete(physical_id, fence=self._fence(), resource_name=self.name)

    def _require_object(self):
        if not self.physical_id or self.context.store.get(self.physical_id) is None:
            raise exceptions.PhysicalObjectMissing(self.name, self.physical_id)

    def check(self):
        self._require_object()

    def suspend(self):
        self._require_object()
        self.context.store.update(self.physical_id, self.name, fence=self._fence(),
                                  state="SUSPENDED")

    def resume(self):
        self._require_object()
        self.context.store.update(self.physical_id, self.name, fence=self._fence(),
                                  state="ACTIVE")
