"""``[conductor]``: the ``nestedflow-conductor`` daemon.

The jobboard, database and messaging URLs are shared with the engine
(``[engine] jobboard_url``, ``[database] connection``, ``[engine]
transport_url``); everything here is specific to one daemon.
"""

import os
import socket

from oslo_config import cfg

GROUP = "conductor"

#: What a conductor name may contain: it becomes a ZooKeeper node name and
#: the prefix of the owner token stored with every run it claims.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"


def _default_name():
    return socket.gethostname().split(".")[0][:40] or "conductor"


def _default_workers():
    # Same reasoning as [engine] max_workers: resource actions mostly wait.
    return max(4, 4 * (os.cpu_count() or 1))


conductor_opts = [
    cfg.StrOpt(
        "name",
        default=_default_name(),
        sample_default="<short hostname>",
        regex=NAME_PATTERN,
        help="Name this conductor registers and claims jobs under; recorded in the "
        "events of every resource action it runs. Must be unique among the live "
        "conductors of one jobboard (run two on one host with two names).",
    ),
    cfg.IntOpt(
        "job_slots",
        default=2,
        min=1,
        help="Jobs (stack traversals) one conductor runs at once. A job that only "
        "waits for its nested stacks gives its slot up meanwhile.",
    ),
    cfg.IntOpt(
        "resource_action_workers",
        default=_default_workers(),
        sample_default="4 x CPU count, at least 4",
        min=1,
        help="Resource actions of one job that may run at once (threads of "
        "TaskFlow's parallel engine).",
    ),
    cfg.FloatOpt(
        "zookeeper_session_timeout",
        default=10.0,
        min=2.0,
        help="Seconds before ZooKeeper expires the session of a silent conductor; "
        "its job claims are then released and another conductor resumes its "
        "jobs. The server bounds it (minSessionTimeout, 2 x tickTime).",
    ),
    cfg.IntOpt(
        "max_job_attempts",
        default=5,
        min=1,
        help="Claims of one job that may end without the stack settling (the "
        "conductor crashed or the run failed unexpectedly) before the next "
        "conductor gives up and marks the stack FAILED. A conductor that "
        "hands a job back on SIGTERM does not use up an attempt.",
    ),
    cfg.FloatOpt(
        "graceful_shutdown_timeout",
        default=120.0,
        min=0.0,
        help="On SIGTERM, seconds to wait for running jobs to reach a safe point "
        "(their resource actions in flight finish) before exiting anyway; "
        "another conductor then resumes them as after a crash. 0 waits for ever.",
    ),
    cfg.FloatOpt(
        "poll_interval",
        default=1.0,
        min=0.05,
        help="Seconds between looks at the jobboard when no job is posted (posts "
        "also wake the conductor at once through a ZooKeeper watch).",
    ),
]


def register_opts(conf):
    conf.register_opts(conductor_opts, group=GROUP)


def list_opts():
    return [(GROUP, conductor_opts)]
