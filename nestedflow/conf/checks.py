"""Options of resource pre- and post-checks (nestedflow.checks)."""

from oslo_config import cfg

GROUP = "checks"

checks_opts = [
    cfg.DictOpt(
        "commands",
        default={},
        help="Local commands a 'command' check may run, as name:command-line "
        "pairs (e.g. 'db-ready:/usr/local/bin/db-ready --quick'). An environment "
        "names a command, never gives one: only what the operator lists here runs. "
        "The command line is split like a shell's (no shell runs it) and gets "
        "NESTEDFLOW_STACK, NESTEDFLOW_RESOURCE, NESTEDFLOW_PHYSICAL_ID, "
        "NESTEDFLOW_ACTION and NESTEDFLOW_PHASE in its environment; exit status 0 "
        "passes. Write $ as $$ (oslo.config substitutes $name).",
    ),
    cfg.FloatOpt(
        "default_timeout",
        default=10.0,
        min=0.001,
        help="Seconds one attempt of a check may take when its spec gives no timeout.",
    ),
    cfg.IntOpt(
        "default_retries",
        default=0,
        min=0,
        help="Further attempts after a failed one when a check's spec gives no retries.",
    ),
    cfg.FloatOpt(
        "default_delay",
        default=1.0,
        min=0,
        help="Seconds between attempts when a check's spec gives no delay.",
    ),
]


def register_opts(conf):
    conf.register_opts(checks_opts, group=GROUP)


def list_opts():
    return [(GROUP, checks_opts)]
