"""oslo.context's RequestContext on the wire (RPC calls and notifications).

Heat does the same with ``heat.common.messaging.RequestContextSerializer``:
oslo.messaging's Notifier drops a context given as a plain dict, and sends
a RequestContext's ``redacted_copy()`` through the serializer.
"""

import oslo_messaging as messaging


class ContextSerializer(messaging.NoOpSerializer):
    """An empty context stands for "no context" (the embedded default)."""

    def serialize_context(self, ctxt):
        # oslo.messaging's Notifier hands over {} for "no context".
        if ctxt is None or isinstance(ctxt, dict):
            return dict(ctxt or {})
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        if not ctxt:
            return None
        from oslo_context import context

        return context.RequestContext.from_dict(ctxt)
