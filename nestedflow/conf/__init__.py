"""Configuration: every option has a default so embedded use needs no file.

Options live in one module per area; ``list_opts`` feeds
oslo-config-generator (``oslo-config-generator --namespace nestedflow``).
"""

from oslo_config import cfg

from nestedflow.conf import conductor, database, engine

CONF = cfg.CONF

_AREAS = (engine, database, conductor)

for _area in _AREAS:
    _area.register_opts(CONF)


def list_opts():
    opts = []
    for area in _AREAS:
        opts.extend(area.list_opts())
    return opts
