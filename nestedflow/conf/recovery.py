"""Options of the embedded engine's heartbeat and of orphan recovery."""

from oslo_config import cfg

GROUP = "engine"

recovery_opts = [
    cfg.FloatOpt(
        "heartbeat_interval",
        default=5.0,
        min=0.1,
        help="Seconds between the heartbeats an engine writes while it runs or "
        "posts stacks, as Heat's engines report to its service table. An engine "
        "that missed three is dead: an embedded engine then resumes the stacks "
        "the dead one's runs left IN_PROGRESS, and may take over their resource "
        "locks at once (a delete of such a stack does not wait); an engine with "
        "a jobboard posts the jobs of the traversals the dead one stored and had "
        "not posted.",
    ),
    cfg.BoolOpt(
        "recover_orphans",
        default=True,
        help="Whether an engine, when it starts running stacks and then at every "
        "heartbeat, resumes the stacks left IN_PROGRESS by dead embedded engines "
        "(from their journal, as a conductor resumes a job) or, with a jobboard, "
        "posts the jobs dead engines stored but had not posted.",
    ),
]


def register_opts(conf):
    conf.register_opts(recovery_opts, group=GROUP)


def list_opts():
    return [(GROUP, recovery_opts)]
