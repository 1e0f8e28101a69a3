"""Options of the read-only web dashboard (``nestedflow dashboard``,
:mod:`nestedflow.dashboard`).

It reads the database of ``[database] connection`` and listens to the
notifications of ``[oslo_messaging_notifications]`` like every other part
of nestedflow; these options say where it serves and whom it trusts.
"""

from oslo_config import cfg

GROUP = "dashboard"

dashboard_opts = [
    cfg.HostAddressOpt(
        "bind_host",
        default="127.0.0.1",
        help="Address the dashboard listens on. The default serves this host "
        "only: the dashboard has no login of its own, so anything wider belongs "
        "behind an authenticating proxy (doc/source/dashboard.rst).",
    ),
    cfg.PortOpt(
        "port",
        default=8780,
        help="TCP port the dashboard listens on (0: any free port).",
    ),
    cfg.IntOpt(
        "threads",
        default=16,
        min=2,
        help="Requests served at once. Every open live view (one per browser "
        "tab showing a stack) holds one for as long as it stays open.",
    ),
    cfg.IntOpt(
        "max_live_views",
        default=12,
        min=0,
        help="Live views open at once; more are refused (503) so that pages "
        "still load. Keep it under 'threads'.",
    ),
    cfg.FloatOpt(
        "keepalive_interval",
        default=15.0,
        min=0.1,
        help="Seconds between keep-alive comments on an idle live view, so "
        "proxies do not close it and a closed tab frees its thread.",
    ),
    cfg.BoolOpt(
        "trust_proxy_headers",
        default=False,
        help="Take the viewer's project from the X-Project-Id and X-Roles "
        "headers an authenticating proxy (or keystonemiddleware's auth_token "
        "filter) sets, and show a viewer without an admin role only that "
        "project's stacks, as the engine's tenancy does. Off: every viewer "
        "sees every stack, so only turn it off where the dashboard is "
        "reachable by operators alone.",
    ),
    cfg.ListOpt(
        "admin_roles",
        default=["admin"],
        help="Roles (X-Roles) that see every project's stacks when "
        "trust_proxy_headers is on.",
    ),
]


def register_opts(conf):
    conf.register_opts(dashboard_opts, group=GROUP)


def list_opts():
    return [(GROUP, dashboard_opts)]
