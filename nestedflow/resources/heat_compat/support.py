"""Heat's ``heat.engine.support``: the support status a plugin declares
(``support_status = support.SupportStatus(version='5.0.0')``). nestedflow
keeps it for documentation; it changes nothing at run time (as in Heat,
where only listings and the docs generator read it)."""

SUPPORT_STATUSES = (UNKNOWN, SUPPORTED, DEPRECATED, UNSUPPORTED, HIDDEN) = (
    "UNKNOWN", "SUPPORTED", "DEPRECATED", "UNSUPPORTED", "HIDDEN")


class SupportStatus:
    """``SupportStatus(status=SUPPORTED, message=None, version=None,
    previous_status=None, substitute_class=None)``; an unknown status reads
    as UNKNOWN, as Heat's ``SupportStatus.validate`` has it."""

    def __init__(self, status=SUPPORTED, message=None, version=None, previous_status=None,
                 substitute_class=None):
        if previous_status is not None and not isinstance(previous_status, SupportStatus):
            raise ValueError(
                f"previous_status must be SupportStatus, not {type(previous_status).__name__}")
        if status not in SUPPORT_STATUSES:
            status, message, version, previous_status = (
                UNKNOWN, f"Specified status is invalid, defaulting to {UNKNOWN}", None, None)
        self.status = status
        self.message = message
        self.version = version
        self.previous_status = previous_status
        self.substitute_class = substitute_class

    def to_dict(self):
        previous = self.previous_status
        return {"status": self.status, "message": self.message, "version": self.version,
                "previous_status": previous.to_dict() if previous is not None else None}

    def is_substituted(self, substitute_class):
        return self.substitute_class is not None and substitute_class is self.substitute_class


def is_valid_status(status):
    return status in SUPPORT_STATUSES
