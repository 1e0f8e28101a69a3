"""The check plugin interface.

A check type is a subclass of :class:`Check` registered under the
``nestedflow.checks`` entry-point group, its entry-point name being the
``type`` an environment's check spec names::

    [options.entry_points]
    nestedflow.checks =
        http = nestedflow.checks.impl_http:HttpCheck

The engine builds one instance per spec and calls :meth:`Check.run` once
per attempt, with the attempt's timeout; the engine handles retries, the
delay between attempts, recording the result and failing the resource.
"""

import abc
import dataclasses
import typing

from nestedflow import exceptions


@dataclasses.dataclass
class CheckTarget:
    """What a check may look at: the resource and the action it guards."""

    stack_id: str
    stack_name: str
    resource_name: str
    #: CREATE, UPDATE, CHECK, SUSPEND or RESUME.
    action: str
    #: "pre" (before the action) or "post" (after it succeeded).
    phase: str
    physical_id: str | None
    #: ``get_attribute(name)`` of the resource plugin (None before a create).
    get_attribute: typing.Callable[[str], typing.Any]


class Check(abc.ABC):
    """One configured check.

    ``params`` are the spec's type-specific keys (everything but the common
    ``name``, ``type``, ``phase``, ``actions``, ``timeout``, ``retries`` and
    ``delay``), already validated by :meth:`validate`.
    """

    #: Type-specific keys the spec may give: name -> required.
    parameters: typing.ClassVar[dict] = {}

    def __init__(self, params):
        self.params = params

    @classmethod
    def validate(cls, params, path):
        """Reject bad ``params`` with :class:`StackValidationFailed` at ``path``.

        The default checks the keys against :attr:`parameters`; override to
        check values too (and call this).
        """
        for key in params:
            if key not in cls.parameters:
                raise exceptions.StackValidationFailed(
                    f"unknown key; expected one of {sorted(cls.parameters)} or the common "
                    "keys name, type, phase, actions, timeout, retries, delay",
                    path=f"{path}.{key}")
        for key, required in cls.parameters.items():
            if required and key not in params:
                raise exceptions.StackValidationFailed("missing", path=f"{path}.{key}")

    @abc.abstractmethod
    def run(self, target, timeout):
        """Check ``target`` once, giving up after ``timeout`` seconds.

        Return a short message saying what passed; raise
        :class:`nestedflow.exceptions.CheckError` (or any exception) with a
        message saying what did not.
        """
