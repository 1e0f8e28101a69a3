"""``orchestration service list`` (heatclient's ``ListService``)."""

from nestedflow.cmd.commands import tables

#: heatclient/osc/v1/service.py ``ListService``'s columns, each read from
#: the key of Heat's service dict osc-lib's get_item_properties reads
#: ("Engine ID" -> engine_id).
COLUMNS = ("Hostname", "Binary", "Engine ID", "Host", "Topic", "Updated At", "Status")


class ListService(tables.Lister):
    """List the engines sharing the database (heatclient's Heat engines).

    One row per engine heartbeat (nestedflow-engine services, conductors,
    programs running stacks in-process): ``up`` while it beats, ``down``
    once it missed two beats, as Heat tells its services' status. The
    answer is :meth:`nestedflow.Engine.list_services`, the one heat-api's
    ``GET /services`` shows.
    """

    def take_action(self, parsed_args):
        found = self.app.engine.list_services()
        keys = [name.lower().replace(" ", "_") for name in COLUMNS]
        return COLUMNS, [tuple(service.get(key) for key in keys) for service in found]
