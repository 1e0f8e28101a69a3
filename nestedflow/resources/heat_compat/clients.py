"""Clients a Heat-style plugin reaches through ``self.client(name)``.

The host registers a factory per client name, as Heat's client plugins
(``heat.engine.clients``) would be found; a factory is called with the
action's request context (an ``oslo_context`` RequestContext, or None for
the embedded default) and its client is kept for that one action.
"""

_FACTORIES = {}


def register_client(name, factory):
    """``factory(request_context)`` returns the client ``self.client(name)`` gives."""
    _FACTORIES[name] = factory


def unregister_client(name):
    _FACTORIES.pop(name, None)


def make(name, request_context):
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise LookupError(
            f"no client {name!r}: register one with "
            "nestedflow.resources.heat_compat.clients.register_client") from None
    return factory(request_context)
