"""Options of Heat-style plugins (nestedflow.resources.heat_compat)."""

from oslo_config import cfg

GROUP = "heat_compat"

heat_compat_opts = [
    cfg.ListOpt(
        "plugin_dirs",
        # Heat's own default ([DEFAULT] plugin_dirs in heat.common.config).
        default=["/usr/lib64/heat", "/usr/lib/heat", "/usr/local/lib/heat",
                 "/usr/local/lib64/heat"],
        help="Directories searched, as Heat searches its plugin_dirs, for resource "
        "plugin modules written for Heat: every module whose resource_mapping() or "
        "available_resource_mapping() names types is loaded unchanged (its heat.* "
        "imports served by nestedflow's Heat adapter). A type also registered as a "
        "nestedflow.resources entry point keeps the entry point's class.",
    ),
    cfg.FloatOpt(
        "poll_interval",
        default=0.2,
        min=0.01,
        help="Seconds before the first check_*_complete poll after handle_*; "
        "each later wait is 1.5 times longer, up to max_poll_interval.",
    ),
    cfg.FloatOpt(
        "max_poll_interval",
        default=2.0,
        min=0.01,
        help="Longest wait between two check_*_complete polls. Waiting gives "
        "the worker thread up, so this bounds latency, not threads.",
    ),
]


def register_opts(conf):
    conf.register_opts(heat_compat_opts, group=GROUP)


def list_opts():
    return [(GROUP, heat_compat_opts)]
