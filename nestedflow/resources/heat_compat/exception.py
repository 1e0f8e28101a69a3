"""The errors Heat plugins raise (``heat.common.exception``): nestedflow's
own classes (:mod:`nestedflow.exceptions`) under Heat's names.

``StackValidationFailed(message=...)``, ``UpdateReplace(name)``,
``ResourceInError(status_reason=, resource_status=)``,
``EntityNotFound(entity=, name=)``... take Heat's arguments.
"""

from nestedflow.exceptions import (  # noqa: F401 - re-exported
    EntityNotFound,
    Invalid,
    InvalidTemplateAttribute,
    NotFound,
    NotSupported,
    PropertyUnspecifiedError,
    ResourceActionNotSupported,
    ResourceFailure,
    ResourceInError,
    ResourcePropertyConflict,
    ResourcePropertyDependency,
    StackValidationFailed,
    UpdateReplace,
)
from nestedflow.exceptions import NestedflowError as Error  # noqa: F401
from nestedflow.exceptions import NestedflowError as HeatException  # noqa: F401
