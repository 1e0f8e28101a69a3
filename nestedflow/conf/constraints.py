from oslo_config import cfg

GROUP = "constraints"

constraint_opts = [
    cfg.BoolOpt(
        "refuse_unknown_custom_constraints",
        default=False,
        help="Refuse a template whose custom_constraint names no installed plugin "
        "(entry-point group nestedflow.constraints). By default such a constraint "
        "is accepted with a warning and checks nothing: templates written for "
        "Heat name cloud constraints (nova.flavor, glance.image ...) that have "
        "no meaning without that cloud.",
    ),
]


def register_opts(conf):
    conf.register_opts(constraint_opts, group=GROUP)


def list_opts():
    return [(GROUP, constraint_opts)]
