"""``[yaql]``: limits of the ``yaql`` intrinsic function (Heat's ``[yaql]`` options)."""

from oslo_config import cfg

GROUP = "yaql"

yaql_opts = [
    cfg.IntOpt(
        "limit_iterators",
        default=200,
        min=1,
        help="The maximum number of elements a collection in a yaql expression "
        "may have while it is evaluated (Heat's default).",
    ),
    cfg.IntOpt(
        "memory_quota",
        default=10000,
        min=1,
        help="The maximum memory, in bytes, a yaql expression may take while it "
        "is evaluated: bounds the size of its result (Heat's default).",
    ),
]


def register_opts(conf):
    conf.register_opts(yaql_opts, group=GROUP)


def list_opts():
    return [(GROUP, yaql_opts)]
