"""``Engine.list_services``: Heat's ``list_services`` answer from
nestedflow's engine heartbeats.

Heat's ``service`` table holds a row per heat-engine, refreshed every
``periodic_interval``; nestedflow's equivalent is ``engine_heartbeats``
(:mod:`nestedflow.db.heartbeats`): a row per running Engine -- a
``nestedflow-engine`` service, a conductor, a command line or program
running traversals in-process -- refreshed every ``[engine]
heartbeat_interval`` and removed when the engine closes (or by another
engine three beats after it died). ``orchestration service list`` and
heat-api's ``GET /services`` (nestedflow.heat_rpc) both show these rows.
"""

#: A service's times as Heat's RPC carries them (oslo.serialization's
#: ``to_primitive`` of a datetime): what heatclient prints.
WIRE_TIME = "%Y-%m-%dT%H:%M:%S.%f"


def _wire(value):
    return None if value is None else value.strftime(WIRE_TIME)


def format_service(row):
    """heat/common/service_utils.py ``format_service`` of a heartbeat row:
    ``status`` is ``up`` while the engine beat within two of its
    intervals (the row's ``up``), else ``down``. Heat's ``host`` (its RPC
    server name) and ``hostname`` are both the engine's host name here;
    ``topic`` is None (an Engine listens on none itself); the engine id
    is the heartbeat's, the one its runs are named after."""
    return {"id": row.id, "host": row.host, "hostname": row.host, "binary": row.binary,
            "topic": None, "engine_id": row.id, "report_interval": row.report_interval,
            "created_at": _wire(row.created_at), "updated_at": _wire(row.updated_at),
            "deleted_at": None, "status": "up" if row.up else "down"}


class ServiceMethods:
    """The Engine's ``list_services`` (a mixin of :class:`nestedflow.Engine`)."""

    def list_services(self, context=None):
        """Every engine sharing this database, as Heat's ``list_services``
        answers its services (see :func:`format_service`), oldest first."""
        return [format_service(row) for row in self.db.list_heartbeats()]
