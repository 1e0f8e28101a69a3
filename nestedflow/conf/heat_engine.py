"""Options of Heat's engine RPC API served by ``nestedflow-engine``
(:mod:`nestedflow.heat_rpc`, doc/source/heat.rst).

heat-api sends every call on ``control_exchange`` (Heat's default ``heat``)
and topic ``engine`` (heat/rpc/api.py ``ENGINE_TOPIC``); the broker is the
same ``[DEFAULT] transport_url`` as nestedflow's own API.
"""

import socket

from oslo_config import cfg

GROUP = "heat_engine"

heat_engine_opts = [
    cfg.BoolOpt(
        "enabled",
        default=False,
        help="Also serve Heat's engine RPC API (version 1.36), so that an "
        "unmodified heat-api (and every Heat client behind it) drives this "
        "engine's stacks.",
    ),
    cfg.StrOpt(
        "exchange",
        default="heat",
        help="Exchange heat-api sends on: its [DEFAULT] control_exchange.",
    ),
    cfg.StrOpt(
        "topic",
        default="engine",
        help="Topic heat-api sends on (Heat's engine topic).",
    ),
    cfg.StrOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<hostname>",
        help="This service's server name on the topic; list_services reports it.",
    ),
]


def register_opts(conf):
    conf.register_opts(heat_engine_opts, group=GROUP)


def list_opts():
    return [(GROUP, heat_engine_opts)]
