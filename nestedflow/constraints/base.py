"""The interface of a custom-constraint plugin."""

import abc


class CustomConstraint(abc.ABC):
    """A check on one value, registered under a name in the entry-point group
    ``nestedflow.constraints`` (the name templates write after
    ``custom_constraint:``).

    The class is instantiated once per process, without arguments, and may
    be called from several threads: keep no per-value state. As Heat's
    common constraints, a check that needs a cloud service does not belong
    here; a plugin that needs one should talk to it in ``validate``.
    """

    #: What a valid value is, shown when describing a parameter (Heat's
    #: ``message``); the default names the constraint.
    description = None

    @abc.abstractmethod
    def validate(self, value):
        """Return if ``value`` is acceptable; otherwise raise ``ValueError``
        whose text says why (it is shown after ``Error validating value``).

        ``value`` is the parameter or property value after type coercion:
        a string, number, boolean, or one item of a list.
        """
