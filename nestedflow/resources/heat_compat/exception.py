"""The errors Heat plugins raise (``heat.common.exception``): nestedflow's
own classes under Heat's names."""

from nestedflow.exceptions import (  # noqa: F401 - re-exported
    EntityNotFound,
    ResourceFailure,
    ResourceInError,
    StackValidationFailed,
    UpdateReplace,
)
from nestedflow.exceptions import NestedflowError as Error  # noqa: F401
