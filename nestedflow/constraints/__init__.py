"""Custom constraints: named value checks that templates use as
``constraints: [{custom_constraint: NAME}]`` (Heat's ``heat.constraints``).

Each is a :class:`~nestedflow.constraints.base.CustomConstraint` plugin in
the stevedore entry-point group ``nestedflow.constraints``; the built-ins
(network addresses, dates, cron, time zones, JSON) need no cloud.
"""
