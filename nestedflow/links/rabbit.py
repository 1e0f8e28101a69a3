"""The TLS settings of a RabbitMQ transport URL, tried once.

oslo.messaging reads its ``[oslo_messaging_rabbit]`` options from the
transport URL's query too (``ConfigOptsProxy`` in its amqp driver: the
query wins), which is how nestedflow's stack events -- sent on a private
configuration -- get them::

    rabbit://USER:PASSWORD@HOST:5671/?ssl=true&ssl_ca_file=/etc/nestedflow/ca.pem

With a wrong CA kombu retries the handshake for ever, logging each
attempt; :func:`tls_problem` makes one handshake with the same settings
and says what failed, naming the link.
"""

import urllib.parse

from oslo_utils import strutils

from nestedflow.links import tls

GROUP = "oslo_messaging_rabbit"
AMQPS_PORT = 5671
_KEYS = ("ssl", "ssl_ca_file", "ssl_cert_file", "ssl_key_file")


def _settings(parts, conf):
    settings = {}
    group = None
    if conf is not None:
        try:
            group = conf[GROUP]
        except Exception:  # not registered: only the URL's query counts
            group = None
    for key in _KEYS:
        if group is not None:
            try:
                settings[key] = group[key]
            except Exception:
                settings[key] = None
    for key, values in urllib.parse.parse_qs(parts.query).items():
        if key in _KEYS:
            settings[key] = values[-1]
    return settings


def tls_problem(transport_url, conf=None):
    """One line naming the link if a TLS handshake with the first RabbitMQ
    host of ``transport_url`` fails (None: TLS is off, or it succeeds)."""
    parts = urllib.parse.urlsplit(transport_url or "")
    if not parts.scheme.startswith("rabbit"):
        return None
    settings = _settings(parts, conf)
    if not strutils.bool_from_string(settings.get("ssl") or False):
        return None
    context = tls.client_context(settings.get("ssl_ca_file"), settings.get("ssl_cert_file"),
                                 settings.get("ssl_key_file"))
    for netloc in parts.netloc.split(","):
        hosts = tls.split_hosts(netloc.rpartition("@")[2], AMQPS_PORT)
        for host, port in hosts:
            problem = tls.handshake_problem(host, port, context)
            if problem:
                return (f"RabbitMQ link rabbit://{host}:{port}: {problem} "
                        f"(ssl_ca_file={settings.get('ssl_ca_file')})")
    return None
