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
import hashlib
import threading
import typing
import uuid

from nestedflow import exceptions
from nestedflow.db.owners import OwnerToken
from nestedflow.properties import schema

# Re-exported: a plugin's validate_resource is handed one (plugins.rst).
from nestedflow.properties.schema import StackSummary  # noqa: F401


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
    #: The oslo.context RequestContext of the stack's latest action (None:
    #: the embedded default), without its tokens; see nestedflow.tenancy.
    request_context: typing.Any = None
    #: The software-config store (:class:`nestedflow.db.software_config.SoftwareConfigStore`)
    #: Heat's own config and deployment types keep their configs in; None
    #: where a plugin is made outside a traversal (previews, snapshots).
    software_configs: typing.Any = None
    #: The project the stack belongs to (None: the embedded default's).
    project_id: str | None = None
    #: The signals of this resource and its stack
    #: (:class:`nestedflow.stacks.signals.SignalBox`): what :meth:`Resource.
    #: handle_signal` keeps, and what an action waiting for signals reads.
    signals: typing.Any = None

    def physical_resource_name(self):
        """Heat's ``<stack>-<resource>-<short id>``: stable for one resource
        version, new for its replacement."""
        digest = hashlib.sha1(f"{self.stack_id}:{self.resource_id}".encode())
        return f"{self.stack_name}-{self.resource_name}-{digest.hexdigest()[:12]}"

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
    :class:`nestedflow.properties.schema.Property`) and ``attributes_schema``
    (name -> :class:`nestedflow.properties.schema.Attribute`), and implement
    the six actions. ``self.properties`` holds the validated, resolved
    properties of the action being performed.
    """

    properties_schema: typing.ClassVar[dict] = {}
    attributes_schema: typing.ClassVar[dict] = {}
    #: Its actions mostly wait for child stacks (and give their worker up
    #: meanwhile, see :mod:`nestedflow.pools.workers`).
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
    #: True when :meth:`update` may be run again after it was interrupted
    #: (the process running it crashed): applying the same properties to
    #: an object that got part or all of them already leaves it as one
    #: uninterrupted update would. The engine then resumes an interrupted
    #: in-place update in place; otherwise (the default, as in Heat) it
    #: replaces the object, whose state is unknown.
    update_resumable: typing.ClassVar[bool] = False
    #: True when every update of the stack replaces it, changed or not
    #: (Heat's UpdateWaitConditionHandle, whose _needs_update always raises
    #: UpdateReplace): its signal senders must signal the new one.
    replace_on_every_update: typing.ClassVar[bool] = False

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

    def pre_check(self, action):  # noqa: B027 -- optional hook, deliberately empty
        """Optional: is the system in the state ``action`` needs?

        Called just before ``create``, ``update`` (in place), ``check``,
        ``suspend`` and ``resume`` (``action`` is CREATE, UPDATE, ...), only
        if the type overrides it. Raise (any exception, its message saying
        what is wrong) to fail the resource before the action touches
        anything; return a short message (or None) when it passed. The
        result is stored as check ``plugin`` (``Engine.list_checks``).
        """

    def post_check(self, action):  # noqa: B027 -- optional hook, deliberately empty
        """Optional: did ``action`` work? Called once it succeeded, only if
        the type overrides it; raising fails the resource (and rolls back
        unless rollback is disabled). See :meth:`pre_check`."""

    def handle_adopt(self, resource_data):
        """Take over an existing physical object instead of creating one.

        ``resource_data`` is the resource's entry of Heat's abandon data
        (``resource_id``, ``resource_data``, ...). Returns the physical id.
        The default, as Heat's ``Resource.handle_adopt``, takes the id and
        the plugin data as they are; a type that can look the object up
        should check that it exists.
        """
        resource_id = (resource_data or {}).get("resource_id")
        if not resource_id:
            raise exceptions.AdoptFailed(self.name, "the adopt data has no resource_id")
        self.context.physical_id = resource_id
        self.context.data = dict((resource_data or {}).get("resource_data") or {})
        return resource_id

    def handle_snapshot(self):
        """What a stack snapshot keeps of this resource besides its physical
        id, properties and plugin data (Heat's hook of the same name, e.g. a
        volume backup's id); JSON-serialisable. Nothing by default."""
        return {}

    @classmethod
    def handle_restore(cls, properties, snapshot_data):
        """The properties a restore converges the resource to, from those it
        had and what :meth:`handle_snapshot` kept (Heat's ``handle_restore``
        returns a changed definition, e.g. a volume made from its backup).
        The snapshot's properties by default."""
        return properties

    # ``handle_snapshot_delete(self)``, optional (Heat's hook): delete under
    # ``deletion_policy: Snapshot`` -- keep a snapshot of the object where it
    # lives (a backup), then delete it. Only a type that defines it takes
    # that policy (Heat's Resource.validate_deletion_policy).

    # ``handle_signal(self, details)``, optional (Heat's hook of the same
    # name): the type takes signals (``Engine.signal_resource``; a type
    # without it refuses them with ResourceActionNotSupported, as Heat's
    # Resource._handle_signal). Called in the process that received the
    # signal, with ``self.properties`` and ``self.context.data`` as the
    # resource's last action left them; it validates ``details`` (raise to
    # refuse the signal: the caller gets the error), keeps what an action
    # must see with ``self.context.signals.keep(details, key)`` -- an action
    # waiting on ``self.context.signals.wait`` is woken -- and returns the
    # reason of the SIGNAL event (Heat's "Signal: <reason>"), or None.
    # It must be idempotent for one key: a signal may be delivered twice.

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
    def checked_properties(cls, name, values, path):
        """``values`` (resource ``name``'s properties, functions resolved)
        checked against the type: converted, defaults filled in. Raises
        StackValidationFailed naming ``path.<key>``. A type whose
        ``properties_schema`` is None takes any properties unchecked."""
        if cls.properties_schema is None:
            return values
        return schema.validate_properties(cls.properties_schema, values, path)

    @classmethod
    def validate_resource(cls, name, properties, stack, path):
        """Optional: the type's own checks of resource ``name`` when its
        template is validated, after :meth:`checked_properties` (Heat's
        ``Resource.validate``). ``properties`` may hold
        :data:`~nestedflow.properties.schema.UNRESOLVED` values; ``stack`` is
        a :class:`StackSummary`. Raise StackValidationFailed (naming
        ``path``) to refuse the template."""
        return None  # nothing more to check by default

    @classmethod
    def needs_replace_with_prop_diff(cls, changed, new_properties, old_properties):
        """Must a change of the properties named in ``changed`` replace the
        object although each of them allows an update (Heat's hook of the
        same name)? Asked before the update, and by the update preview, so
        a preview says what the update does; ``update`` may still raise
        :class:`~nestedflow.exceptions.UpdateReplace` when it finds out late.
        """
        return False

    @classmethod
    def fingerprint(cls, properties, files, type_name):
        """What else, besides the properties, forces an update when it changes.

        None for most types; nested stacks digest the template file they use.
        """
        return None


class DatabaseOnlyResource(Resource):
    """A type whose actions change nothing outside nestedflow's database:
    the row the engine keeps is the whole resource (``OS::Heat::None``,
    a scaling policy, a deployed server Heat does not manage).

    Its physical id is derived from the create key, so a re-run create
    returns the same id; an update only stores the new properties, so it
    can be run again after a crash; the other actions have nothing to do.
    """

    side_effects = False
    update_resumable = True
    #: Put before the create key in the physical id's name, so two types
    #: created by one resource (a replacement of another type) differ.
    id_prefix: typing.ClassVar[str] = ""

    def create(self):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, self.id_prefix + self.context.create_key))

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


class StoredObjectResource(Resource):
    """A resource whose physical object lives in the shared physical store.

    The built-in test types inherit the idempotent lifecycle from here and
    only describe what they keep.
    """

    #: An update writes the object's properties: writing them again is the same.
    update_resumable = True

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
        # nestedflow.db.physical): the store is a cloud that takes a
        # fencing token.
        return (self.context.resource_id,
                self.context.holder or OwnerToken.any_run_of(self.context.traversal_id))

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

    def handle_adopt(self, resource_data):
        physical_id = super().handle_adopt(resource_data)
        self._require_object()
        return physical_id

    def handle_snapshot(self):
        """The object as it is: its properties, data and state."""
        self._require_object()
        found = self.context.store.get(self.physical_id)
        return {"properties": found.properties, "data": found.data, "state": found.state}

    def keep_snapshot_and_delete(self):
        """A ``handle_snapshot_delete`` for a type to take (``handle_snapshot_delete
        = StoredObjectResource.keep_snapshot_and_delete``): a copy of the object
        is left in the store (``<type>::Snapshot``, keyed on the object so a
        re-run keeps one), then the object goes. The built-in types do not take
        it, as Heat's TestResource and RandomString have no snapshot delete."""
        if self.physical_id and self.context.store.get(self.physical_id) is not None:
            kept = self.handle_snapshot()
            self.context.store.create(
                f"snapshot:{self.physical_id}", stack_id=self.context.stack_id,
                resource_id=self.context.resource_id, resource_name=self.name,
                type_name=f"{self.context.type_name}::Snapshot",
                properties=kept["properties"],
                data={"of": self.physical_id, "data": kept["data"]}, fence=self._fence())
        self.delete()

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
