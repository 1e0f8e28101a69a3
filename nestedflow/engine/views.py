"""Read-only views handed to users: Stack, Resource, Event (DESIGN.md section 3)."""

import dataclasses
import datetime


def _jsonable(value):
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


@dataclasses.dataclass(frozen=True)
class _View:
    def to_dict(self):
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True)
class Stack(_View):
    id: str
    name: str
    action: str
    status: str
    status_reason: str
    outputs: dict
    parent_id: str | None
    disable_rollback: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    @property
    def stack_status(self):
        return f"{self.action}_{self.status}"

    @classmethod
    def from_row(cls, row):
        return cls(
            id=row.id,
            name=row.name,
            action=row.action,
            status=row.status,
            status_reason=row.status_reason,
            outputs=dict(row.outputs or {}),
            parent_id=row.parent_id,
            disable_rollback=row.disable_rollback,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )


@dataclasses.dataclass(frozen=True)
class Resource(_View):
    name: str
    type: str
    physical_id: str | None
    action: str
    status: str
    status_reason: str
    properties: dict
    stack_id: str
    updated_at: datetime.datetime | None
    #: The stack the resource belongs to (differs when listing nested depths).
    stack_name: str | None = None

    @classmethod
    def from_row(cls, row, stack_name=None):
        return cls(
            stack_name=stack_name,
            name=row.name,
            type=row.type,
            physical_id=row.physical_id,
            action=row.action,
            status=row.status,
            status_reason=row.status_reason,
            properties=dict(row.properties_data or {}),
            stack_id=row.stack_id,
            updated_at=row.updated_at,
        )


@dataclasses.dataclass(frozen=True)
class Event(_View):
    id: int
    timestamp: datetime.datetime
    resource_name: str
    action: str
    status: str
    status_reason: str
    physical_id: str | None
    engine_id: str | None
    stack_name: str | None = None

    @classmethod
    def from_row(cls, row, stack_name):
        return cls(
            stack_name=stack_name,
            id=row.id,
            timestamp=row.timestamp,
            # Heat names stack-level events after the stack itself.
            resource_name=row.resource_name or stack_name,
            action=row.action,
            status=row.status,
            status_reason=row.status_reason,
            physical_id=row.physical_id,
            engine_id=row.engine_id,
        )
