"""Configuration: every option has a default so embedded use needs no file.

Options live in one module per area; ``list_opts`` feeds
oslo-config-generator (``oslo-config-generator --namespace nestedflow``).
"""

import os

from oslo_config import cfg

from nestedflow.conf import (
    checks,
    cli,
    conductor,
    constraints,
    dashboard,
    database,
    dummy,
    engine,
    heat_compat,
    heat_engine,
    recovery,
    rpc,
    yaql,
)

CONF = cfg.CONF

#: Read when no configuration file is named, if it exists.
DEFAULT_CONFIG_FILE = "/etc/nestedflow/nestedflow.conf"

_AREAS = (
    engine,
    database,
    conductor,
    yaql,
    rpc,
    dummy,
    checks,
    constraints,
    heat_compat,
    heat_engine,
    recovery,
    dashboard,
    cli,
)

for _area in _AREAS:
    _area.register_opts(CONF)


def list_opts():
    opts = []
    for area in _AREAS:
        opts.extend(area.list_opts())
    return opts


def load(config_files=None, prog=None):
    """Load :data:`CONF` from ``config_files`` (None: :data:`DEFAULT_CONFIG_FILE`
    if it exists) and return it: every command line does this once.
    ``prog``: the program's name, ``CONF.prog`` (None: the script's).

    ``default_config_files`` is explicit so oslo.config does not go looking
    in ~/.nestedflow or /etc on its own.
    """
    if config_files is None:
        config_files = [DEFAULT_CONFIG_FILE] if os.path.isfile(DEFAULT_CONFIG_FILE) else []
    CONF(args=[], project="nestedflow", prog=prog, default_config_files=config_files)
    return CONF
