"""The ``[database]`` group is oslo.db's own (``connection`` and pool options).

Unset ``connection`` means an SQLite file in the user's data directory;
the sample config documents these options under the ``oslo.db`` namespace.
"""

import os

import platformdirs
from oslo_db import options as db_options


def default_url():
    """SQLite file in the user's data directory (NESTEDFLOW_DB_URL overrides)."""
    url = os.environ.get("NESTEDFLOW_DB_URL")
    if url:
        return url
    data_dir = platformdirs.user_data_dir("nestedflow")
    return "sqlite:///" + os.path.join(data_dir, "nestedflow.sqlite")


#: oslo.db's default keeps 5 connections: a conductor's resource actions
#: (8 workers per job, 2 jobs) then open and close a new server connection
#: for most transactions -- a forked PostgreSQL backend each time.
MAX_POOL_SIZE = 16


def register_opts(conf):
    db_options.set_defaults(conf, max_pool_size=MAX_POOL_SIZE)


def list_opts():
    return []
