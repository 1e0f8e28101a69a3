"""Every error nestedflow raises on purpose.

The hierarchy::

    NestedflowError
     +-- StackNotFound
     +-- ResourceNotFound
     +-- StackValidationFailed          template, parameters or environment rejected
     |    +-- StackExists               a live top-level stack has the name
     |    +-- TemplateSyntaxError       YAML could not be parsed (line / column)
     |    +-- UnknownResourceType
     |    +-- DependencyCycle
     |    +-- PropertyUnspecifiedError  Heat's: none of some properties is given
     |    +-- ResourcePropertyConflict  Heat's: properties that exclude each other
     |    +-- ResourcePropertyDependency  Heat's: a property needs another one
     |    +-- InvalidTemplateAttribute  Heat's: a resource has no such attribute
     +-- ActionNotAllowed               e.g. delete of a stack already deleted
     +-- NotSupported                   e.g. an update changing external_id
     +-- ResourceFailure                a resource action failed (names the resource)
     +-- UpdateReplace                  raised by a plugin: replace instead of update
     +-- OwnershipLost                  this traversal no longer owns the work
     |    +-- TraversalSuperseded       a newer traversal took over the stack
     |    +-- ResourceLocked            another traversal holds the resource
     |    +-- Fenced                    a journal write by a run fenced off
     +-- PhysicalObjectMissing          check found the physical object gone
     +-- DummyFailed                    OS::Heat::Dummy's fail_prop asked it to fail
     +-- CheckFailed                    a pre- or post-check of a resource action failed
     +-- CheckError                     raised by a check plugin: this attempt did not pass
     +-- FlowFactoryNotAllowed          a job names a factory outside the allow-list
     +-- WaitTimeout                    Engine.wait gave up
     +-- StackTimedOut                  a create or update ran past its timeout
     +-- Cancelled                      the user cancelled the traversal
     +-- NestedStackFailed              a nested stack failed (its path and reason)
     +-- ConductorNameTaken             a live conductor already uses the name
     +-- RemoteFailure                  an error crossing RPC (rebuilt on the client)
     +-- ResidentEngineUnavailable      no usable resident engine on the CLI's socket
     +-- ResourceInError                a Heat-style plugin's object went to an error state
     +-- EntityNotFound                 a Heat-style plugin's object is gone
     +-- NotFound                       Heat's: something a Heat-style plugin reads is gone
     +-- Invalid                        Heat's: data a Heat-style plugin got is not valid
     +-- ResourceActionNotSupported     Heat's: the type does not do this action
                                        (e.g. a signal to a type that takes none)
     +-- UnsupportedDependency          TaskFlow or SQLAlchemy lacks a name nestedflow uses
     +-- AdoptFailed                    a resource could not take its object over
     +-- SnapshotNotFound               no snapshot of the stack has that id
     +-- SoftwareConfigNotFound         no software config (visible here) has that id
     +-- SoftwareDeploymentNotFound     no software deployment (visible here) has that id
     +-- HeatFault                      an answer of Heat's engine RPC API (a Heat class name)
     +-- ResourceActionNotSupported     e.g. a signal to a type that takes none
     +-- SoftwareDeploymentFailed       a deployment's signal reported a failure
     +-- InvalidBreakPointHook          an unknown hook, or one not set on the resource
     +-- WaitConditionFailure           a wait condition got a FAILURE signal
     +-- WaitConditionTimeout           a wait condition's timeout passed first
     +-- NoActionRequired               a signal that changes nothing (a group cooling down)
     +-- LinkSecurityError              a TLS handshake with a trusted server failed
     +-- DashboardRefusal               the dashboard answers a request with an HTTP error

``path`` on validation errors is the dotted location inside the template
(``resources.web.properties.port``) so callers can point at the problem.
"""


class NestedflowError(Exception):
    """Base of every nestedflow error."""


class StackNotFound(NestedflowError):
    def __init__(self, stack_id):
        self.stack_id = stack_id
        super().__init__(f"Stack {stack_id} not found")


class ResourceNotFound(NestedflowError):
    def __init__(self, stack_id, name):
        self.stack_id = stack_id
        self.resource_name = name
        super().__init__(f"Resource {name} not found in stack {stack_id}")


class StackValidationFailed(NestedflowError):
    """The template (or its parameters) was rejected before anything was stored."""

    def __init__(self, message, path=None):
        self.path = path
        self.reason = message
        text = f"{path}: {message}" if path else message
        super().__init__(text)


class StackExists(StackValidationFailed):
    """A live top-level stack already has the name; nothing was stored."""

    def __init__(self, name):
        self.name = name
        super().__init__(f"stack {name!r} already exists")


class TemplateSyntaxError(StackValidationFailed):
    """``source`` names the file (a path or files-map key) when known."""

    def __init__(self, message, line=None, column=None, path=None, source=None):
        self.line = line
        self.column = column
        self.source = source
        if line is not None:
            message = f"line {line}, column {column}: {message}"
        if source is not None:
            message = f"{source}: {message}"
        super().__init__(message, path=path)


class UnknownResourceType(StackValidationFailed):
    def __init__(self, type_name, path=None):
        self.type_name = type_name
        super().__init__(f"unknown resource type {type_name!r}", path=path)


class DependencyCycle(StackValidationFailed):
    def __init__(self, cycle):
        self.cycle = list(cycle)
        super().__init__(
            "circular dependency: " + " -> ".join(self.cycle), path="resources"
        )


class ActionNotAllowed(NestedflowError):
    pass


class NotSupported(NestedflowError):
    """An action the resource cannot do (Heat's NotSupported), e.g. an
    update that changes ``external_id``."""

    def __init__(self, feature):
        self.feature = feature
        super().__init__(f"{feature} is not supported.")


class ResourceFailure(NestedflowError):
    """A resource action failed; the message names the resource."""

    def __init__(self, resource_name, action, error):
        self.resource_name = resource_name
        self.action = action
        self.error = error
        # A failed nested stack extends the path into the child, as Heat does:
        # resources.group.resources[2].resources.db: <error>
        path_message = getattr(error, "path_message", None)
        if path_message is not None:
            super().__init__(path_message(resource_name))
        else:
            super().__init__(f"resources.{resource_name}: {error}")


class UpdateReplace(NestedflowError):
    """Raised by a plugin's ``update`` when the change needs a new physical object."""

    def __init__(self, resource_name=None):
        self.resource_name = resource_name
        super().__init__(f"resource {resource_name} must be replaced")


class OwnershipLost(NestedflowError):
    """This traversal may no longer act: state belongs to somebody else now."""


class TraversalSuperseded(OwnershipLost):
    def __init__(self, stack_id, traversal_id):
        self.stack_id = stack_id
        self.traversal_id = traversal_id
        super().__init__(f"traversal {traversal_id} of stack {stack_id} was superseded")


class ResourceLocked(OwnershipLost):
    def __init__(self, resource_name, holder):
        self.resource_name = resource_name
        self.holder = holder
        super().__init__(f"resource {resource_name} is locked by {holder}")


class PhysicalObjectMissing(NestedflowError):
    def __init__(self, resource_name, physical_id):
        self.resource_name = resource_name
        self.physical_id = physical_id
        super().__init__(
            f"physical object {physical_id} of resource {resource_name} does not exist"
        )


class InvalidResourceState(NestedflowError):
    """A suspend or resume asked of a resource in a state it does not apply
    to; Heat's words (heat/engine/resource.py ``suspend``/``resume``)."""

    def __init__(self, action, state):
        self.action = action
        self.state = tuple(state)
        super().__init__(f"State {self.state} invalid for {action.lower()}")


class DummyFailed(NestedflowError):
    """``OS::Heat::Dummy`` failed because its ``fail_prop`` is ``"yes"``."""


class CheckFailed(NestedflowError):
    """A pre- or post-check of a resource action failed; names the check."""

    def __init__(self, resource_name, action, phase, check, message):
        self.resource_name = resource_name
        self.action = action
        self.phase = phase
        self.check = check
        self.message = message
        super().__init__(f"{phase}-check {check!r} of {action} failed: {message}")


class CheckError(NestedflowError):
    """Raised by a check plugin's ``run``: the attempt did not pass."""


class FlowFactoryNotAllowed(NestedflowError):
    def __init__(self, factory_name):
        self.factory_name = factory_name
        super().__init__(f"flow factory {factory_name!r} is not in the allow-list")


class WaitTimeout(NestedflowError):
    pass


class StackTimedOut(NestedflowError):
    """A create or update ran past the stack's ``timeout`` (minutes); the
    traversal fails (and rolls back, unless rollback is disabled)."""

    def __init__(self, action, minutes):
        self.action = action
        self.minutes = minutes
        super().__init__(f"Stack {action} timed out after {minutes} minute(s)")


class Cancelled(NestedflowError):
    """The user cancelled the traversal (``Engine.cancel_update``)."""


class Fenced(OwnershipLost):
    """A write (its journal, an event, a nested stack) by a run that no
    longer owns its traversal.

    Deliberately not TaskFlow's StorageFailure: TaskFlow retries those for
    15 seconds, while a fenced run must stop at once.
    """


class NestedStackFailed(NestedflowError):
    """The child stack failed; ``child_reason`` is its status reason."""

    def __init__(self, child_reason, indexed=False):
        self.child_reason = child_reason
        self.indexed = indexed
        super().__init__(child_reason)

    def path_message(self, resource_name):
        """``resources.parent.resources.child: error`` (Heat's nested error path)."""
        reason = self.child_reason
        if reason.startswith("resources."):
            inner = reason[len("resources."):]
            if self.indexed:
                # Group members are named by index: resources[2] as in Heat.
                index, _, rest = inner.partition(".")
                index, sep, error = index.partition(": ")
                inner = f"[{index}]" + (f"{sep}{error}" if sep else f".{rest}")
                return f"resources.{resource_name}.resources{inner}"
            return f"resources.{resource_name}.resources.{inner}"
        return f"resources.{resource_name}: {reason}"


class ConductorNameTaken(NestedflowError):
    """Another live conductor of the jobboard already uses this name."""


class UnsupportedDependency(NestedflowError):
    """An installed TaskFlow or SQLAlchemy lacks a (private) name nestedflow
    relies on: it is newer or older than the versions nestedflow supports."""

    def __init__(self, name, supported, installed):
        self.name = name
        self.supported = supported
        self.installed = installed
        super().__init__(f"{installed} has no {name}, which nestedflow relies on; "
                         f"nestedflow supports {supported}")


class RemoteFailure(NestedflowError):
    """How an error raised by a remote engine crosses oslo.messaging.

    oslo.messaging rebuilds an exception on the client by calling its class
    with the ``args`` it was raised with, which nestedflow's classes do not
    accept (they take a stack id, a path... and format the message). The
    engine service raises this instead -- its arguments are exactly what it
    is built from -- and :func:`from_remote` turns it back into the original
    class with the original message and attributes on the client.
    """

    def __init__(self, class_name, message, attributes=None):
        self.class_name = class_name
        self.message = message
        self.attributes = dict(attributes or {})
        super().__init__(class_name, message, self.attributes)

    def __str__(self):
        return f"{self.class_name}: {self.message}"


def to_remote(error):
    """The :class:`RemoteFailure` that carries ``error`` (a NestedflowError)."""
    attributes = {name: value for name, value in vars(error).items()
                  if isinstance(value, (str, int, float, bool, type(None), list, dict))}
    return RemoteFailure(type(error).__name__, str(error), attributes)


def from_remote(failure):
    """The error a :class:`RemoteFailure` carries, as its own class.

    An unknown class name (a newer server) gives a NestedflowError with
    the message.
    """
    cls = globals().get(failure.class_name)
    if not (isinstance(cls, type) and issubclass(cls, NestedflowError)):
        cls = NestedflowError
    # Not cls(...): constructors format their message from their own
    # arguments; the message is already formatted.
    error = cls.__new__(cls)
    Exception.__init__(error, failure.message)
    error.__dict__.update(failure.attributes)
    return error


class ResidentEngineUnavailable(NestedflowError):
    """The command line found no resident engine it may use at ``path``:
    none answers, it serves another database, or it went away mid-call."""

    def __init__(self, path, reason):
        self.path = path
        self.reason = reason
        super().__init__(f"no resident engine at {path}: {reason}")


class AdoptFailed(NestedflowError):
    """A resource could not take over the object its adopt data names."""

    def __init__(self, resource_name, reason):
        self.resource_name = resource_name
        super().__init__(f"resource {resource_name}: cannot adopt: {reason}")


class SnapshotNotFound(NestedflowError):
    """No snapshot of the stack has that id."""

    def __init__(self, snapshot_id):
        self.snapshot_id = snapshot_id
        super().__init__(f"snapshot {snapshot_id} not found")


class SoftwareConfigNotFound(NestedflowError):
    """No software config the caller may see has that id (Heat's NotFound)."""

    def __init__(self, config_id):
        self.config_id = config_id
        super().__init__(f"Software config with id {config_id} not found")


class SoftwareDeploymentNotFound(NestedflowError):
    """No software deployment the caller may see has that id (Heat's NotFound)."""

    def __init__(self, deployment_id):
        self.deployment_id = deployment_id
        super().__init__(f"Deployment with id {deployment_id} not found")


class SoftwareDeploymentFailed(NestedflowError):
    """A software deployment failed: its signal carried a non-zero
    ``deploy_status_code`` or an error output (Heat's reason, as
    ``SoftwareDeployment._check_complete`` words it)."""

    def __init__(self, status_reason):
        self.status_reason = status_reason
        super().__init__(f"Deployment to server failed: {status_reason}")


class ResourceInError(NestedflowError):
    """Heat's (``heat.common.exception``): a Heat-style plugin's cloud object
    went to an error state."""

    def __init__(self, status_reason="Unknown", resource_status="ERROR"):
        self.status_reason = status_reason
        self.resource_status = resource_status
        super().__init__(f"Went to status {resource_status} due to \"{status_reason}\"")


class EntityNotFound(NestedflowError):
    """Heat's: a Heat-style plugin's cloud object could not be found."""

    def __init__(self, entity="Entity", name="unknown"):
        self.entity = entity
        self.name = name
        super().__init__(f"The {entity} ({name}) could not be found.")


class NotFound(NestedflowError):
    """Heat's ``NotFound(msg_fmt)``: what a Heat-style plugin looked for is gone."""

    def __init__(self, msg_fmt="Not found"):
        super().__init__(msg_fmt)


class Invalid(NestedflowError):
    """Heat's ``Invalid(reason=)``."""

    def __init__(self, reason="unknown"):
        self.reason = reason
        super().__init__(f"Data supplied was not valid: {reason}")


class PropertyUnspecifiedError(StackValidationFailed):
    """Heat's ``PropertyUnspecifiedError(*names)``: one of them is needed."""

    def __init__(self, *args, **kwargs):
        super().__init__("At least one of the following properties must be specified: "
                         + ", ".join(args), path=kwargs.get("path"))


class ResourcePropertyConflict(StackValidationFailed):
    """Heat's ``ResourcePropertyConflict(*names)``: they exclude each other."""

    def __init__(self, *args, **kwargs):
        text = ", ".join(args)
        if kwargs.get("prop1") is not None:
            text = f"{kwargs['prop1']}, {kwargs.get('prop2')}"
        super().__init__(f"Cannot define the following properties at the same time: {text}",
                         path=kwargs.get("path"))


class ResourcePropertyDependency(StackValidationFailed):
    """Heat's ``ResourcePropertyDependency(prop1=, prop2=)``."""

    def __init__(self, prop1="", prop2="", path=None):
        super().__init__(f"{prop1} cannot be specified without {prop2}.", path=path)


class InvalidTemplateAttribute(StackValidationFailed):
    """Heat's ``InvalidTemplateAttribute(resource=, key=)``."""

    def __init__(self, resource="", key="", path=None):
        self.resource = resource
        self.key = key
        super().__init__(f"The Referenced Attribute ({resource} {key}) is incorrect.",
                         path=path)


class DatabaseUnavailable(NestedflowError):
    """The state database cannot be used: a malformed URL, a server that does
    not answer, a missing database or SQLite directory. The message names
    which, in one line."""


class HeatFault(NestedflowError):
    """An error answered to heat-api by :mod:`nestedflow.heat_rpc`.

    Its subclasses (made by :func:`nestedflow.heat_rpc.faults.fault`) bear
    the name of one of Heat's exception classes and Heat's module name
    ``heat.common.exception``: oslo.messaging sends the class and module
    names with ``kwargs``, and heat-api rebuilds Heat's own class from them
    (``Class(**kwargs)``, which formats Heat's message) and maps it to its
    HTTP code by name. ``args`` stays empty: Heat's classes take keywords only.
    """

    def __init__(self, message, /, **kwargs):
        super().__init__()
        self.message = message
        self.kwargs = kwargs

    def __str__(self):
        return self.message


class ResourceActionNotSupported(NestedflowError):
    """Heat's ResourceActionNotSupported (heat-api answers 400): the
    resource's type cannot do ``action``, e.g. a signal to a type that has
    no ``handle_signal`` (heat/engine/resource.py Resource._handle_signal)."""

    def __init__(self, action="unknown", resource_name=None, type_name=None):
        self.action = action
        self.resource_name = resource_name
        self.type_name = type_name
        where = f" {resource_name} ({type_name})" if resource_name else ""
        super().__init__(f"{action} is not supported for resource{where}.")


class InvalidBreakPointHook(NestedflowError):
    """Heat's InvalidBreakPointHook (heat-api answers 400): an unknown hook
    type, or a hook that is not pending on the resource signalled."""

    def __init__(self, message):
        self.message = message
        super().__init__(message)


class WaitConditionFailure(NestedflowError):
    """A wait condition's handle got a FAILURE signal; the message is the
    failures' reasons joined by ``;`` (heat/engine/resources/wait_condition.py)."""

    def __init__(self, reasons):
        self.reasons = list(reasons)
        super().__init__(";".join(self.reasons))


class WaitConditionTimeout(NestedflowError):
    """A wait condition's timeout passed before ``count`` successes arrived:
    ``"1 of 2 received - <reasons>"`` as Heat's WaitConditionTimeout."""

    def __init__(self, received_reasons, count):
        self.reasons = list(received_reasons)
        self.count = count
        message = f"{len(self.reasons)} of {count} received"
        if self.reasons:
            message += " - " + ";".join(self.reasons)
        super().__init__(message)


class NoActionRequired(NestedflowError):
    """Heat's NoActionRequired: the signal is accepted and changes nothing
    (a scaling group not COMPLETE, already scaling, cooling down, or at the
    size asked for); no event is recorded, as in Heat."""


class LinkSecurityError(NestedflowError):
    """A link to a server nestedflow trusts (ZooKeeper, RabbitMQ, the
    database) failed its TLS handshake: a wrong CA, certificate or key. The
    message names the link and what failed, in one line."""


class DashboardRefusal(NestedflowError):
    """The dashboard (:mod:`nestedflow.dashboard.app`) answers a request with
    an HTTP error: ``status`` (e.g. ``"405 Method Not Allowed"``), the
    one-line ``message`` and extra response ``headers``."""

    def __init__(self, status, message, headers=()):
        self.status = status
        self.headers = list(headers)
        super().__init__(message)
