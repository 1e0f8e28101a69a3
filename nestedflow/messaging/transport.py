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

import oslo_messaging
from oslo_config import cfg

#: In-process delivery only: the embedded default, needing no broker.
IN_PROCESS = "fake://"
NOTIFICATIONS = "oslo_messaging_notifications"


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
