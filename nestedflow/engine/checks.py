"""Reading check results: ``Engine.list_checks`` (``nestedflow stack checks``)."""

import dataclasses
import datetime

from nestedflow.db import check_results
from nestedflow.engine import views


@dataclasses.dataclass(frozen=True)
class CheckResult(views.View):
    """One run of one pre- or post-check of one resource action."""

    resource_name: str
    #: CREATE, UPDATE, CHECK, SUSPEND or RESUME.
    action: str
    #: "pre" or "post".
    phase: str
    #: The check's name (its spec's ``name``, or ``plugin`` for the
    #: resource type's own pre_check/post_check).
    check: str
    #: The check type (an entry point of ``nestedflow.checks``, or ``plugin``).
    type: str
    #: "PASS" or "FAIL".
    status: str
    message: str
    #: Seconds, every attempt included.
    duration: float
    attempts: int
    timestamp: datetime.datetime
    traversal_id: str | None
    stack_name: str | None = None

    @classmethod
    def from_row(cls, row, stack_name=None):
        return cls(resource_name=row.resource_name, action=row.action, phase=row.phase,
                   check=row.check_name, type=row.type, status=row.status,
                   message=row.message, duration=row.duration, attempts=row.attempts,
                   timestamp=row.timestamp, traversal_id=row.traversal_id,
                   stack_name=stack_name)


def list_checks(db, stacks, latest=False):
    """Check results of ``stacks`` (a stack and the nested stacks asked for),
    oldest first; ``latest``: only each check's last result."""
    results = []
    for stack in stacks:
        results.extend(CheckResult.from_row(row, stack.name)
                       for row in check_results.list_results(db, stack.id))
    results.sort(key=lambda r: r.timestamp)
    if latest:
        last = {}
        for result in results:
            last[(result.stack_name, result.resource_name, result.action, result.phase,
                  result.check)] = result
        results = sorted(last.values(), key=lambda r: r.timestamp)
    return results
