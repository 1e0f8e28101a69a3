"""Options of ``OS::Heat::Dummy``, the convergence PoC's test resource."""

from oslo_config import cfg

GROUP = "dummy"

dummy_opts = [
    cfg.FloatOpt(
        "min_wait_secs",
        default=1.0,
        min=0,
        help="Shortest time each create, update and delete of an OS::Heat::Dummy "
        "resource waits (the PoC's Dummy sleeps 1 to 5 seconds). Set both bounds "
        "to 0 to make tests fast.",
    ),
    cfg.FloatOpt(
        "max_wait_secs",
        default=5.0,
        min=0,
        help="Longest time each action of an OS::Heat::Dummy resource waits; the "
        "wait is drawn uniformly between min_wait_secs and this.",
    ),
]


def register_opts(conf):
    conf.register_opts(dummy_opts, group=GROUP)


def list_opts():
    return [(GROUP, dummy_opts)]
