"""HeatStyleResource: runs a resource plugin written for Heat's
``heat.engine.resource.Resource`` API, unchanged (doc/source/plugins.rst,
"Heat resource plugins", lists what is supported).

Each nestedflow action maps onto Heat's handlers the way
``Resource._do_action`` drives them: ``handle_<action>()`` once, then
``check_<action>_complete(token)`` until it returns True. Between two polls
the action is parked (:func:`nestedflow.pools.workers.park`): it holds
neither a worker nor a thread, so hundreds can wait at once on a pool of a
few threads, as Heat's green threads do. The wait starts at ``[heat_compat]
poll_interval`` and grows 1.5 times per poll up to ``max_poll_interval``.

Validation follows Heat's ``Resource.__init__``/``validate``: the plugin's
``reparse()`` builds ``self.properties`` (applying ``translation_rules()``),
the values are checked against the resulting ``props``
(:meth:`HeatStyleResource.checked_properties`), then the plugin's
``validate()`` runs (:meth:`HeatStyleResource.validate_resource`).
"""

import contextlib
import inspect

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.pools import workers
from nestedflow.resources import base
from nestedflow.resources.heat_compat import (
    attributes,
    clients,
    definition,
    status,
    support,
    translation,
)

#: Heat's names for errors a plugin raises through this module.
UpdateReplace = exceptions.UpdateReplace

#: ``traversal_id`` of the context of a plugin built from a template's raw
#: values (validation): its translation rules still have to be applied.
_RAW_VALUES = "heat_compat:raw-values"


class PollDelay(Exception):
    """Heat's: raised by ``check_*_complete`` so the next poll comes only
    after ``period`` poll intervals (the current interval, ``period`` times)."""

    def __init__(self, period):
        if period < 1:
            raise ValueError("PollDelay period must be at least 1")
        self.period = period


class NoActionRequired(Exception):
    """Heat's: a signal that needs no action (nestedflow sends no signals)."""

    def __init__(self, res_name="Unknown", reason=""):
        super().__init__(f"The resource {res_name} could not perform scaling action: {reason}")


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


@contextlib.contextmanager
def _refused_at(path):
    """Any error of the plugin's while a template is validated refuses the
    template, naming the resource (Heat's Stack.validate does the same)."""
    try:
        yield
    except exceptions.StackValidationFailed as error:
        if error.path:
            raise
        raise exceptions.StackValidationFailed(error.reason, path=path) from None
    except Exception as error:
        raise exceptions.StackValidationFailed(
            f"{type(error).__name__}: {error}", path=path) from None


def _validation_context(name, type_name, stack, raw):
    return base.ActionContext(
        stack_id=stack.id, stack_name=stack.name, resource_id=0, resource_name=name,
        type_name=type_name, traversal_id=_RAW_VALUES if raw else "", create_key="",
        store=None)


class HeatStyleResource(status.ResourceStatus, base.Resource):
    """Base class of a plugin in Heat's style (``heat.engine.resource.Resource``).

    Subclasses keep Heat's class attributes (``PROPERTIES``,
    ``properties_schema`` of :class:`properties.Schema`, ``attributes_schema``
    of :class:`attributes.Schema`, ``default_client_name``, ``entity``) and
    handlers; every handler is optional.
    """

    BASE_ATTRIBUTES = (SHOW,) = (attributes.SHOW_ATTR,)
    properties_schema = {}
    attributes_schema = {}
    update_allowed_properties = ()
    default_client_name = None
    entity = None
    support_status = support.SupportStatus()
    strict_dependency = True

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
        # Heat's get_attr validation takes any attribute name from a type
        # that overrides get_attribute (hot.functions.GetAttThenSelect).
        cls.dynamic_attributes = cls.get_attribute is not HeatStyleResource.get_attribute

    def __init__(self, name, properties, context):
        super().__init__(name, properties, _ContextView(context))
        self._action_context = context
        self.stack = definition.StackView(context.stack_id, context.stack_name,
                                          context.request_context)
        self.t = definition.ResourceDefinition(name, context.type_name, properties)
        self.action, self.status = self.INIT, self.COMPLETE
        self._client_plugins = {}
        self.reparse(client_resolve=False)

    # -- what the engine asks of the class -----------------------------------

    @classmethod
    def checked_properties(cls, name, values, path):
        """Heat's ``reparse`` (translation rules applied) on the template's
        values, then the resulting ``props`` checked."""
        stack = definition.StackView(None, None, None)
        with _refused_at(path):
            resource = cls(name, values, _validation_context(name, None, stack, raw=True))
            return resource.properties.validated(path)

    @classmethod
    def validate_resource(cls, name, properties, stack, path):
        """The plugin's ``validate()``, as Heat's ``Stack.validate`` calls it:
        any error it raises refuses the template."""
        view = definition.StackView(stack.id, stack.name, None, stack.timeout,
                                    stack.resource_names)
        with _refused_at(path):
            resource = cls(name, properties, _validation_context(name, None, view, raw=False))
            resource.stack = view
            resource.validate()

    # -- the nestedflow actions, as Heat's handlers -------------------------

    def create(self):
        self.reparse()
        try:
            self._run(self.CREATE)
        except Exception as error:
            if self.resource_id is not None and getattr(error, "record", None) is None:
                # Heat stores resource_id_set() at once, so the delete of a
                # failed create finds the object; here the failure records it.
                error.record = {"physical_id": self.resource_id,
                                "attr_data": {"data": self._action_context.data}}
            raise
        return self.resource_id

    def update(self, new_properties, old_properties):
        # Heat's Resource.update: no change the plugin cares about is a
        # no-op; a changed property that is not update_allowed replaces;
        # handle_update gets the new definition and the changed values.
        after = definition.ResourceDefinition(self.name, self.type(), new_properties)
        before = definition.ResourceDefinition(self.name, self.type(), old_properties)
        after_props = after.properties(self.properties_schema, self.context)
        # During handle_update self.properties are the old ones, as in Heat.
        self.t = before
        self.reparse()
        before_props = self.properties
        if not self._needs_update(after, before, after_props, before_props, None):
            self.t = after
            return None
        changed = {key for key in set(new_properties) | set(old_properties)
                   if new_properties.get(key) != old_properties.get(key)}
        allowed = set(self.update_allowed_properties) | {
            key for key, prop in before_props.props.items() if prop.update_allowed()}
        if not changed <= allowed:
            raise exceptions.UpdateReplace(self.name)
        prop_diff = {key: new_properties.get(key) for key in changed}
        before_id = self.resource_id
        self._run(self.UPDATE, after, {"Properties": prop_diff} if prop_diff else {}, prop_diff)
        self.t = after
        self.reparse()
        return self.resource_id if self.resource_id != before_id else None

    def delete(self):
        self._run(self.DELETE)

    def suspend(self):
        self._run(self.SUSPEND)

    def resume(self):
        self._run(self.RESUME)

    def check(self):
        self.action = self.CHECK
        if hasattr(self, "handle_check"):
            self.handle_check()

    def _run(self, action, *args):
        self.action, self.status = action, self.IN_PROGRESS
        handler = getattr(self, f"handle_{action.lower()}", None)
        token = handler(*args) if handler is not None else None
        complete = getattr(self, f"check_{action.lower()}_complete", None)
        if complete is not None:
            wait = CONF.heat_compat.poll_interval
            while not self._poll(complete, token, wait):
                wait = min(wait * 1.5, CONF.heat_compat.max_poll_interval)
        self.status = self.COMPLETE

    def _poll(self, complete, token, wait):
        try:
            if complete(token):
                return True
            delay = wait
        except PollDelay as poll_delay:
            delay = wait * poll_delay.period
        workers.park(delay)
        if self._action_context.stop_event.is_set():
            self._action_context.still_owner()
            raise exceptions.OwnershipLost(
                f"{self.name}: traversal {self._action_context.traversal_id} was stopped")
        return False

    # -- what nestedflow asks of every plugin ---------------------------------

    def reference_id(self):
        return self.get_reference_id()

    def stored_data(self):
        return self._action_context.data

    # -- Heat's Resource API --------------------------------------------------

    @property
    def resource_id(self):
        return self._action_context.physical_id

    def resource_id_set(self, inst):
        self._action_context.physical_id = None if inst is None else str(inst)

    @property
    def state(self):
        return self.action, self.status

    def type(self):
        return self._action_context.type_name

    def physical_resource_name(self):
        """Heat's ``<stack>-<resource>-<short id>``: stable for one resource
        version, new for its replacement."""
        return self._action_context.physical_resource_name()

    def get_reference_id(self):
        return str(self.resource_id) if self.resource_id is not None else str(self.name)

    def FnGetRefId(self):  # noqa: N802 - Heat's name
        return self.get_reference_id()

    def data(self):
        return dict(self._action_context.data)

    def data_set(self, key, value, redact=False):
        self._action_context.data[key] = value

    def data_delete(self, key):
        return self._action_context.data.pop(key, None) is not None

    # properties: Heat's reparse / translation / validation

    def reparse(self, client_resolve=True):
        self.properties = self.t.properties(self.properties_schema, self.context)
        self.translate_properties(self.properties, client_resolve)

    def translation_rules(self, properties):
        return []

    def translate_properties(self, properties, client_resolve=True, ignore_resolve_error=False):
        rules = self.translation_rules(properties) or []
        if self._action_context.traversal_id != _RAW_VALUES:
            # Stored values were translated when their template was
            # validated; only the cloud lookups (RESOLVE) are left.
            rules = [rule for rule in rules if rule.rule == translation.TranslationRule.RESOLVE]
        properties.update_translation(rules, client_resolve=client_resolve,
                                      ignore_resolve_error=ignore_resolve_error)

    def frozen_definition(self):
        return self.t.freeze()

    def validate(self):
        return self.validate_template()

    def validate_template(self):
        self.properties.validated(f"resources.{self.name}.properties")

    def _needs_update(self, after, before, after_props, before_props, prev_resource,
                      check_init_complete=True):
        return before != after

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        # Heat's default: a plugin without handle_update is replaced by any
        # change of its properties.
        if prop_diff:
            raise exceptions.UpdateReplace(self.name)

    def handle_delete(self):
        # Heat's default: delete ``entity`` through the default client.
        if self.entity and self.resource_id is not None:
            with self._default_client_plugin().ignore_not_found:
                getattr(self.client(), self.entity).delete(self.resource_id)
                return self.resource_id
        return None

    # attributes

    def get_attribute(self, key, *path):
        if key == self.SHOW:
            if self.resource_id is None:
                return None
            with self._default_client_plugin().ignore_not_found:
                return attributes.select_from_attribute(self._show_resource(), path)
            return None
        if key not in self.attributes_schema:
            raise exceptions.InvalidTemplateAttribute(resource=self.name, key=key)
        with self._default_client_plugin().ignore_not_found:
            return attributes.select_from_attribute(self._resolve_attribute(key), path)
        return None

    def FnGetAtt(self, key, *path):  # noqa: N802 - Heat's name
        return self.get_attribute(key, *path)

    def _resolve_attribute(self, name):
        return None

    def _show_resource(self):
        # Heat's default: the ``entity`` object through the default client.
        if self.entity and self.default_client_name is not None:
            found = getattr(self.client(), self.entity).get(self.resource_id)
            return found if isinstance(found, dict) else found.to_dict()
        return None

    # clients

    def client_plugin(self, name=None):
        name = name or self.default_client_name
        if not name:
            raise ValueError(f"{type(self).__name__}: a client name is needed "
                             "(no default_client_name)")
        if name not in self._client_plugins:
            self._client_plugins[name] = clients.client_plugin(
                name, self._action_context.request_context)
        return self._client_plugins[name]

    def client(self, name=None, version=None):
        return self.client_plugin(name).client(version)

    def _default_client_plugin(self):
        if self.default_client_name:
            return self.client_plugin()
        return clients.ClientPlugin(self._action_context.request_context)

    @classmethod
    def is_service_available(cls, context):
        return True, None


#: Heat's name for the base class (``heat.engine.resource.Resource``).
Resource = HeatStyleResource
