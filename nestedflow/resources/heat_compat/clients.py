"""Clients a Heat-style plugin reaches through ``self.client(name)`` and
``self.client_plugin(name)``, as Heat's client plugins
(``heat.engine.clients.client_plugin.ClientPlugin``) give them.

The host registers what serves each name, once per process:

* ``register_client(name, factory, is_not_found=None)``: ``factory(context)``
  returns the client (``context``: the action's oslo.context
  RequestContext, or None for the embedded default); ``is_not_found(error)``
  tells a "gone" error of that client (by default: nestedflow's and Heat's
  NotFound errors, or an error whose ``code``/``status_code``/``http_status``
  is 404);
* ``register_client_plugin(name, plugin_class)``: a :class:`ClientPlugin`
  subclass of the host's (or a Heat plugin package's), built with the
  context; its ``_create()`` makes the client.

A plugin object and its client live for one resource action.
"""

from nestedflow import exceptions

_PLUGINS = {}


class ClientPlugin:
    """Heat's ``ClientPlugin(context)``: ``client(version=None)`` builds the
    client once with ``_create``; ``is_not_found``, ``is_conflict``,
    ``is_over_limit`` classify its errors; ``ignore_not_found`` and
    ``ignore_conflict_and_not_found`` are context managers."""

    default_version = None

    def __init__(self, context):
        self.context = context
        self._clients = {}

    def client(self, version=None):
        version = version or self.default_version
        if version not in self._clients:
            self._clients[version] = self._create(version=version) if version else \
                self._create()
        return self._clients[version]

    def _create(self, version=None):
        raise NotImplementedError(f"{type(self).__name__} does not create a client")

    def is_not_found(self, ex):
        return isinstance(ex, (exceptions.NotFound, exceptions.EntityNotFound)) or any(
            getattr(ex, attribute, None) == 404
            for attribute in ("code", "status_code", "http_status"))

    def is_over_limit(self, ex):
        return any(getattr(ex, attribute, None) == 413
                   for attribute in ("code", "status_code", "http_status"))

    def is_conflict(self, ex):
        return any(getattr(ex, attribute, None) == 409
                   for attribute in ("code", "status_code", "http_status"))

    def is_client_exception(self, ex):
        return self.is_not_found(ex) or self.is_over_limit(ex) or self.is_conflict(ex)

    @property
    def ignore_not_found(self):
        """Heat's two forms: ``with plugin.ignore_not_found:`` swallows a "not
        found" error; ``plugin.ignore_not_found(ex)`` re-raises any other."""
        return _Ignoring(self.is_not_found)

    @property
    def ignore_conflict_and_not_found(self):
        return _Ignoring(lambda ex: self.is_not_found(ex) or self.is_conflict(ex))

    def does_endpoint_exist(self, service_type, service_name):
        return True


class _Ignoring:
    """Callable and context manager: ignores the errors ``matches`` accepts."""

    def __init__(self, matches):
        self._matches = matches

    def __call__(self, ex):
        if not self._matches(ex):
            raise ex

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        return isinstance(error, Exception) and self._matches(error)


class _FactoryPlugin(ClientPlugin):
    factory = None
    not_found = None

    def _create(self, version=None):
        return type(self).factory(self.context)

    def is_not_found(self, ex):
        check = type(self).not_found
        return check(ex) if check is not None else super().is_not_found(ex)


def register_client(name, factory, is_not_found=None):
    """Serve ``self.client(name)`` with ``factory(context)``."""
    _PLUGINS[name] = type(f"{name}ClientPlugin", (_FactoryPlugin,),
                          {"factory": staticmethod(factory),
                           "not_found": staticmethod(is_not_found) if is_not_found else None})


def register_client_plugin(name, plugin_class):
    """Serve ``self.client_plugin(name)`` (and ``self.client(name)``) with
    ``plugin_class(context)``, a :class:`ClientPlugin` subclass."""
    if not (isinstance(plugin_class, type) and issubclass(plugin_class, ClientPlugin)):
        raise TypeError(f"{plugin_class!r} is not a ClientPlugin subclass")
    _PLUGINS[name] = plugin_class


def unregister_client(name):
    _PLUGINS.pop(name, None)


def client_plugin(name, context):
    """A new plugin object for ``name`` in ``context``; LookupError naming
    how to register one when the host registered none."""
    try:
        plugin_class = _PLUGINS[name]
    except KeyError:
        raise LookupError(
            f"no client {name!r}: register one with nestedflow.resources.heat_compat."
            "clients.register_client (or register_client_plugin)") from None
    return plugin_class(context)


def make(name, context):
    """The client ``self.client(name)`` gives (a new plugin's client)."""
    return client_plugin(name, context).client()
