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
     +-- ActionNotAllowed               e.g. delete of a stack already deleted
     +-- ResourceFailure                a resource action failed (names the resource)
     +-- UpdateReplace                  raised by a plugin: replace instead of update
     +-- OwnershipLost                  this traversal no longer owns the work
     |    +-- TraversalSuperseded       a newer traversal took over the stack
     |    +-- ResourceLocked            another traversal holds the resource
     +-- PhysicalObjectMissing          check found the physical object gone
     +-- FlowFactoryNotAllowed          a job names a factory outside the allow-list
     +-- WaitTimeout                    Engine.wait gave up

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
    def __init__(self, message, line=None, column=None, path=None):
        self.line = line
        self.column = column
        if line is not None:
            message = f"line {line}, column {column}: {message}"
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
