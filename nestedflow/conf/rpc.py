"""Options of the engine's RPC service and client (``nestedflow-engine``).

The broker is oslo.messaging's own ``[DEFAULT] transport_url`` (and
``rpc_response_timeout``, ``executor_thread_pool_size``: the requests one
service handles at once), registered by oslo.messaging itself.
"""

import socket

from oslo_config import cfg

GROUP = "rpc"

rpc_opts = [
    cfg.StrOpt(
        "topic",
        default="nestedflow-engine",
        help="Topic the engine services listen on and clients send to. Every "
        "nestedflow-engine on one topic serves the same database; a call goes "
        "to one of them (round-robin).",
    ),
    cfg.StrOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<hostname>",
        help="This engine service's server name on the topic (unique per "
        "process when several run on one host).",
    ),
    cfg.FloatOpt(
        "wait_interval",
        default=20.0,
        min=1.0,
        help="EngineClient.wait() blocks on the server for at most this many "
        "seconds per call, well under rpc_response_timeout, and calls again "
        "until its own timeout.",
    ),
]


def register_opts(conf):
    conf.register_opts(rpc_opts, group=GROUP)


def list_opts():
    return [(GROUP, rpc_opts)]
