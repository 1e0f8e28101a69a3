"""The engine over oslo.messaging: :class:`EngineClient` and the service
``nestedflow-engine`` runs (:mod:`nestedflow.rpc.service`).

Imported on first use: oslo.messaging's drivers are not needed by an
embedded engine's callers.
"""

__all__ = ["EngineClient"]


def __getattr__(name):
    if name == "EngineClient":
        from nestedflow.rpc.client import EngineClient

        return EngineClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
