"""Heat's errors, as heat-api rebuilds them.

heat-api's transport allows remote exceptions from ``heat.common.exception``
(heat/common/messaging.py); oslo.messaging rebuilds ``Class(**kwargs)`` there
and heat-api's fault middleware (heat/api/middleware/fault.py
``FaultWrapper.error_map``) picks the HTTP code by the class name. So each
fault here is raised under Heat's class name and module, with the keyword
arguments of that class's ``msg_fmt`` (heat/common/exception.py) -- and the
same message, for callers that read ``str()``.
"""

from nestedflow import exceptions

#: Heat's module name: the one heat-api accepts remote exceptions from.
HEAT_MODULE = "heat.common.exception"

_CLASSES = {}


def fault(class_name, message, /, **kwargs):
    """A :class:`exceptions.HeatFault` named ``class_name`` (one of Heat's)."""
    cls = _CLASSES.get(class_name)
    if cls is None:
        cls = _CLASSES[class_name] = type(
            class_name, (exceptions.HeatFault,),
            {"__module__": HEAT_MODULE, "__qualname__": class_name})
    return cls(message, **kwargs)


def stack_not_found(name):
    return fault("EntityNotFound", f"The Stack ({name}) could not be found.",
                 entity="Stack", name=name)


def entity_not_found(entity, name):
    return fault("EntityNotFound", f"The {entity} ({name}) could not be found.",
                 entity=entity, name=name)


def resource_not_found(resource_name, stack_name):
    return fault("ResourceNotFound",
                 f"The Resource ({resource_name}) could not be found in Stack {stack_name}.",
                 resource_name=resource_name, stack_name=stack_name)


def not_found(message):
    """Heat's bare NotFound (its message is its ``msg_fmt``)."""
    return fault("NotFound", message, msg_fmt=message.replace("%", "%%"))


def validation_failed(message):
    # StackValidationFailed(message=...) formats to the message alone.
    return fault("StackValidationFailed", message, message=message)


def not_supported(feature):
    return fault("NotSupported", f"{feature} is not supported.", feature=feature)


def action_in_progress(stack_name, action):
    return fault("ActionInProgress",
                 f"Stack {stack_name} already has an action ({action}) in progress.",
                 stack_name=stack_name, action=action)


def translate(error, stack=None):
    """The Heat fault for a nestedflow error (None: no Heat equivalent, the
    caller re-raises it and heat-api answers 500).

    ``stack``: the stack view the call acted on, if it was read first.
    """
    if isinstance(error, exceptions.HeatFault):
        return error
    if isinstance(error, exceptions.StackNotFound):
        return stack_not_found(stack.name if stack is not None else error.stack_id)
    if isinstance(error, exceptions.ResourceNotFound):
        return resource_not_found(error.resource_name,
                                  stack.name if stack is not None else error.stack_id)
    if isinstance(error, exceptions.SnapshotNotFound):
        name = stack.name if stack is not None else ""
        return fault("SnapshotNotFound",
                     f"The Snapshot ({error.snapshot_id}) for Stack ({name}) could not be found.",
                     snapshot=error.snapshot_id, stack=name)
    if isinstance(error, (exceptions.SoftwareConfigNotFound,
                          exceptions.SoftwareDeploymentNotFound)):
        # heat/db/api.py software_config_get / software_deployment_get.
        return not_found(str(error))
    if isinstance(error, exceptions.StackExists):
        return fault("StackExists", f"The Stack ({error.name}) already exists.",
                     stack_name=error.name)
    if isinstance(error, exceptions.UnknownResourceType):
        # heat/engine/environment.py get_class_to_instantiate.
        return validation_failed(f"The Resource Type ({error.type_name}) could not be found.")
    if isinstance(error, exceptions.StackValidationFailed) and \
            error.path == "heat_template_version":
        # heat/engine/template.py get_version raises InvalidTemplateVersion.
        return fault("InvalidTemplateVersion",
                     f"The template version is invalid: {error.reason}",
                     explanation=error.reason)
    if isinstance(error, exceptions.StackValidationFailed):
        return validation_failed(str(error))
    if isinstance(error, exceptions.ActionNotAllowed):
        if stack is not None and stack.status == "IN_PROGRESS":
            return action_in_progress(stack.name, stack.action)
        # Heat answers 400 for an action the stack's state refuses.
        return validation_failed(str(error))
    if isinstance(error, exceptions.ResourceActionNotSupported):
        return fault("ResourceActionNotSupported",
                     f"{error.action} is not supported for resource.", action=error.action)
    if isinstance(error, exceptions.InvalidBreakPointHook):
        return fault("InvalidBreakPointHook", str(error), message=str(error))
    if isinstance(error, exceptions.NotSupported):
        return fault("NotSupported", str(error), feature=error.feature)
    return None
