"""Pre- and post-checks of resource actions (the Fuel pluggable
architecture's pre- and post-deployment tests).

Check types are plugins of the ``nestedflow.checks`` entry-point group
(:class:`nestedflow.checks.base.Check`); which checks run on which resource
comes from the environment's ``checks`` section (:mod:`.spec`) and from the
resource plugin's own ``pre_check``/``post_check`` methods.
"""
