"""The ``[database]`` group is oslo.db's own (``connection`` and pool options).

Unset ``connection`` means an SQLite file in the user's data directory
(:func:`nestedflow.db.migration.default_url`);
the sample config documents these options under the ``oslo.db`` namespace.
"""

from oslo_config import cfg
from oslo_db import options as db_options

#: oslo.db's default keeps 5 connections: a conductor's resource actions
#: (8 workers per job, 2 jobs) then open and close a new server connection
#: for most transactions -- a forked PostgreSQL backend each time. On
#: PostgreSQL a quarter of the pool at most is kept checked out for
#: resource writes (nestedflow.db.kept_connections).
MAX_POOL_SIZE = 16


#: nestedflow's own option in oslo.db's group (it is about the same pool).
database_opts = [
    cfg.FloatOpt(
        "ping_idle_after",
        default=5.0,
        min=0,
        help="Seconds a pooled server connection may stay unused before it is "
        "checked (SELECT 1) when next taken from the pool; 0 checks it every time, "
        "as oslo.db does. A connection in steady use needs no check: a server "
        "going away fails its next statement, and SQLAlchemy then replaces every "
        "pooled connection.",
    ),
    cfg.BoolOpt(
        "prepared_statements",
        default=True,
        help="PostgreSQL: prepare the statements of resource writes once per server "
        "session (PREPARE, then EXECUTE), so that the server does not parse and plan "
        "them again for every resource. Turn it off behind a connection pooler that "
        "hands one client's statements to different server sessions (PgBouncer with "
        "pool_mode = transaction or statement). Other databases ignore it.",
    ),
    cfg.FloatOpt(
        "idle_transaction_timeout",
        min=0,
        sample_default="0.4 x [conductor] zookeeper_session_timeout",
        help="Seconds the database server lets a transaction of nestedflow's sit "
        "idle before it ends the session, rolling the transaction back "
        "(PostgreSQL idle_in_transaction_session_timeout, MariaDB/MySQL "
        "idle_transaction_timeout, rounded up to whole seconds). A process paused "
        "mid-transaction (SIGSTOP, a frozen VM) then holds no row lock another "
        "conductor waits on, and commits nothing when it wakes. Keep it below the "
        "ZooKeeper session timeout; unset follows it. 0 disables the limit.",
    ),
    cfg.FloatOpt(
        "lock_wait_timeout",
        min=0,
        sample_default="0.8 x [conductor] zookeeper_session_timeout",
        help="Seconds a statement of nestedflow's may wait for a row lock before "
        "the server fails it (PostgreSQL lock_timeout, InnoDB "
        "innodb_lock_wait_timeout, rounded up). Keep it above "
        "idle_transaction_timeout and below the ZooKeeper session timeout; unset "
        "follows the session timeout. 0 disables the limit.",
    ),
]


def register_opts(conf):
    db_options.set_defaults(conf, max_pool_size=MAX_POOL_SIZE)
    conf.register_opts(database_opts, group="database")


def list_opts():
    return [("database", database_opts)]
