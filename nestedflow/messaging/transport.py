"""Which oslo.messaging transport an engine uses, read from a host's
configuration without clashing with it.

oslo.messaging's own options (``[DEFAULT] transport_url``,
``[oslo_messaging_notifications] driver/topics/transport_url``) are
registered here exactly as oslo.messaging defines them: registering an
identical option twice is a no-op in oslo.config, so a host that already
registered them (Heat does) keeps its values, and nestedflow never defines
a copy of its own.
"""

import contextlib
import importlib

import oslo_messaging
from oslo_config import cfg

#: In-process delivery only: the embedded default, needing no broker.
IN_PROCESS = "fake://"
NOTIFICATIONS = "oslo_messaging_notifications"
#: (group, module, options' attribute) of oslo.messaging's options
#: registered on the global CONF only (see register_global_only_opts).
_GLOBAL_ONLY = (
    ("oslo_messaging_tracing", "oslo_messaging._tracing.client", "oslo_messaging_tracing"),
    ("oslo_messaging_metrics", "oslo_messaging._metrics.client", "oslo_messaging_metrics"),
)


def register_opts(conf):
    """Register oslo.messaging's ``[DEFAULT]`` transport options and its
    notification options, through the calls that register them in
    oslo.messaging itself.

    Not through ``oslo_messaging.opts.list_opts()``: it imports every
    driver (kombu, amqp) to list their options -- 9,000 more live objects
    in every embedded engine, which each full garbage collection then walks
    (2.5% of a small stack's CPU).
    """
    if "transport_url" not in conf:
        # Parsing the configured URL is what registers the option; a bad
        # URL is reported where the transport is made.
        with contextlib.suppress(oslo_messaging.InvalidTransportURL):
            oslo_messaging.TransportURL.parse(conf)
    if NOTIFICATIONS not in conf:
        oslo_messaging.get_notification_transport(conf, url=IN_PROCESS).cleanup()
    register_global_only_opts(conf)


def register_global_only_opts(conf):
    """The groups oslo.messaging 18 reads on every RPC call and cast but
    registers on the global ``cfg.CONF`` only (its own ConfFixture
    registers them on a test's conf the same way): a host's own ConfigOpts
    otherwise fails its first call with NoSuchOptError. A group a release
    does not have is skipped."""
    for group, module, name in _GLOBAL_ONLY:
        if group in conf:
            continue
        try:
            opts = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        conf.register_opts(opts, group=group)


def url(conf, explicit=None):
    """The transport URL: ``explicit``, else ``[DEFAULT] transport_url``,
    else the deprecated ``[engine] transport_url``, else fake://.

    ``[DEFAULT] transport_url`` counts only where it was set: oslo.messaging
    defaults it to ``rabbit://`` (a broker on localhost), which would make
    an unconfigured embedded engine publish every stack's completion to a
    broker that may not exist.
    """
    register_opts(conf)
    configured = conf.transport_url
    with contextlib.suppress(AttributeError, cfg.NoSuchOptError):
        if conf.get_location("transport_url").location == cfg.Locations.opt_default:
            configured = None
    return explicit or configured or conf.engine.transport_url or IN_PROCESS


def notification_url(conf, transport_url):
    """Where notifications go: their own section's URL, else ``transport_url``."""
    register_opts(conf)
    return conf[NOTIFICATIONS].transport_url or transport_url
