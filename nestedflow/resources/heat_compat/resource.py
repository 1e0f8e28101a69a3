"""HeatStyleResource: runs a resource plugin written for Heat's
``heat.engine.resource.Resource`` API (see doc/source/embedding.rst,
"Porting a Heat plugin", for what is supported).

Each nestedflow action maps onto Heat's handlers the way
``Resource._do_action`` drives them: ``handle_<action>()`` once, then
``check_<action>_complete(token)`` until it returns True. Between two polls
the action is parked (:func:`nestedflow.flows.workers.park`): it holds
neither a worker nor a thread, so hundreds can wait at once on a pool of a
few threads, as Heat's green threads do. The wait starts at ``[heat_compat]
poll_interval`` and grows 1.5 times per poll up to ``max_poll_interval``.
"""

import hashlib
import inspect

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.flows import workers
from nestedflow.resources import base
from nestedflow.resources.heat_compat import clients


class _StackInfo:
    """What Heat plugins read from ``self.stack``: its id and name."""

    def __init__(self, stack_id, name, context):
        self.id = stack_id
        self.name = name
        self.context = context


class _Definition:
    """The new resource definition ``handle_update`` gets as ``json_snippet``."""

    def __init__(self, properties):
        self._properties = properties

    def properties(self, schema=None, context=None):
        return dict(self._properties)

    def get(self, key, default=None):
        return {"Properties": self._properties}.get(key, default)


class _ContextView:
    """``self.context`` of a Heat plugin: the request context's attributes
    (project_id, user_id, roles, auth_token...), while the engine keeps
    reading and writing its own action state (physical_id, data...) here."""

    __slots__ = ("_action",)

    def __init__(self, action):
        object.__setattr__(self, "_action", action)

    def __getattr__(self, name):
        action = object.__getattribute__(self, "_action")
        if hasattr(action, name):
            return getattr(action, name)
        return getattr(action.request_context, name)

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_action"), name, value)

    def to_dict(self):
        request = object.__getattribute__(self, "_action").request_context
        return {} if request is None else request.to_dict()


class HeatStyleResource(base.Resource):
    """Base class of a plugin in Heat's style (``heat.engine.resource.Resource``).

    Subclasses keep Heat's class attributes (``PROPERTIES``,
    ``properties_schema`` of :class:`properties.Schema`, ``attributes_schema``
    of :class:`attributes.Schema`) and handlers; every handler is optional.
    """

    #: Heat's: a create that failed part-way is cleaned up by a delete.
    default_client_name = None
    entity = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        hook = cls.__dict__.get("needs_replace_with_prop_diff")
        if inspect.isfunction(hook):
            # Heat's hook is an instance method (self.properties: the current
            # ones); nestedflow asks the class, before any action runs.
            def ask(klass, changed, new_properties, old_properties, _hook=hook):
                resource = klass.__new__(klass)
                resource.name = None
                resource.properties = old_properties
                return _hook(resource, changed, new_properties, old_properties)

            cls.needs_replace_with_prop_diff = classmethod(ask)

    def __init__(self, name, properties, context):
        super().__init__(name, properties, _ContextView(context))
        self._action = context
        self.stack = _StackInfo(context.stack_id, context.stack_name,
                                context.request_context)
        self.t = _Definition(properties)
        self._clients = {}

    # -- the nestedflow actions, as Heat's handlers -------------------------

    def create(self):
        try:
            self._run("create")
        except Exception as error:
            if self.resource_id is not None and getattr(error, "record", None) is None:
                # Heat stores resource_id_set() at once, so the delete of a
                # failed create finds the object; here the failure records it.
                error.record = {"physical_id": self.resource_id,
                                "attr_data": {"data": self._action.data}}
            raise
        return self.resource_id

    def update(self, new_properties, old_properties):
        changed = {key for key in set(new_properties) | set(old_properties)
                   if new_properties.get(key) != old_properties.get(key)}
        schema = self.properties_schema or {}
        # Heat's Resource._needs_update: a change of a property that is not
        # update_allowed, or one the plugin says needs it, replaces.
        if any(not getattr(schema.get(key), "update_allowed", False) for key in changed):
            raise exceptions.UpdateReplace(self.name)
        prop_diff = {key: new_properties.get(key) for key in changed}
        before = self.resource_id
        self.properties = old_properties
        self._run("update", _Definition(new_properties), {"Properties": prop_diff}, prop_diff)
        self.properties = new_properties
        return self.resource_id if self.resource_id != before else None

    def delete(self):
        self._run("delete")

    def suspend(self):
        self._run("suspend")

    def resume(self):
        self._run("resume")

    def check(self):
        if hasattr(self, "handle_check"):
            self.handle_check()

    def _run(self, action, *args):
        handler = getattr(self, f"handle_{action}", None)
        token = handler(*args) if handler is not None else None
        complete = getattr(self, f"check_{action}_complete", None)
        if complete is None:
            return
        wait = CONF.heat_compat.poll_interval
        while not complete(token):
            workers.park(wait)
            if self._action.stop_event.is_set():
                self._action.still_owner()
                raise exceptions.OwnershipLost(
                    f"{self.name}: traversal {self._action.traversal_id} was stopped")
            wait = min(wait * 1.5, CONF.heat_compat.max_poll_interval)

    # -- what nestedflow asks of every plugin ---------------------------------

    def get_attribute(self, name):
        if name == "show":
            return self._show_resource()
        return self._resolve_attribute(name)

    def reference_id(self):
        return self.get_reference_id()

    def stored_data(self):
        return self._action.data

    # -- Heat's Resource API --------------------------------------------------

    @property
    def resource_id(self):
        return self._action.physical_id

    def resource_id_set(self, inst):
        self._action.physical_id = None if inst is None else str(inst)

    def physical_resource_name(self):
        """Heat's ``<stack>-<resource>-<short id>``: stable for one resource
        version, new for its replacement."""
        digest = hashlib.sha1(f"{self._action.stack_id}:{self._action.resource_id}".encode())
        return f"{self.stack.name}-{self.name}-{digest.hexdigest()[:12]}"

    def get_reference_id(self):
        return self.resource_id if self.resource_id is not None else self.name

    def data(self):
        return dict(self._action.data)

    def data_set(self, key, value, redact=False):
        self._action.data[key] = value

    def data_delete(self, key):
        return self._action.data.pop(key, None) is not None

    def client(self, name=None):
        name = name or self.default_client_name
        if name not in self._clients:
            self._clients[name] = clients.make(name, self._action.request_context)
        return self._clients[name]

    def _resolve_attribute(self, name):
        return None

    def _show_resource(self):
        return None


#: Heat's name for the base class (``heat.engine.resource.Resource``).
Resource = HeatStyleResource
