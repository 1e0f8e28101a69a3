"""Read-only views handed to users: Stack, Resource, Event.

Part of the public surface (doc/source/user-guide.rst, "Python API").
"""

import dataclasses
import datetime


def _jsonable(value):
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


@dataclasses.dataclass(frozen=True)
class View:
    #: Fields holding a datetime (ISO 8601 text in to_dict()).
    _TIMES = frozenset({"created_at", "updated_at", "timestamp", "deleted_at"})

    def to_dict(self):
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data):
        """The inverse of :meth:`to_dict` (how an RPC client rebuilds a view);
        fields it does not know (a newer server's) are dropped."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {}
        for name, value in data.items():
            if name not in known:
                continue
            if name in cls._TIMES and isinstance(value, str):
                value = datetime.datetime.fromisoformat(value)
            values[name] = value
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class Stack(View):
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
    #: The project it belongs to (None: the embedded default's local project).
    project_id: str | None = None
    #: The stack's tags (Heat's); empty where the caller did not read them.
    tags: tuple = ()
    #: Minutes each create and update may take (None: no limit).
    timeout: int | None = None
    #: Output name -> why its value is None (Heat's ``output_error``).
    output_errors: dict | None = None
    #: When the stack was deleted (None: it is not); listed with show_deleted.
    deleted_at: datetime.datetime | None = None

    @property
    def stack_status(self):
        return f"{self.action}_{self.status}"

    @classmethod
    def from_row(cls, row, tags=()):
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
            project_id=row.project_id,
            tags=tuple(tags or ()),
            timeout=row.timeout,
            output_errors=dict(getattr(row, "output_errors", None) or {}),
            deleted_at=getattr(row, "deleted_at", None),
        )


@dataclasses.dataclass(frozen=True)
class Resource(View):
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
class Event(View):
    id: int
    timestamp: datetime.datetime
    resource_name: str
    action: str
    status: str
    status_reason: str
    physical_id: str | None
    engine_id: str | None
    stack_name: str | None = None
    #: The request id of the action (traversal) the event belongs to, when
    #: it was started with a request context.
    request_id: str | None = None

    @classmethod
    def from_row(cls, row, stack_name, request_id=None):
        return cls(
            request_id=request_id,
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
