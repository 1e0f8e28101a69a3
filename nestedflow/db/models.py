"""SQLAlchemy models of nestedflow's state.

The tables are laid out for convergence from the start:

* ``stacks.current_traversal`` is replaced with a compare-and-swap when a
  new traversal (create/update/delete/rollback) takes over, so there is no
  stack-wide lock; ``parent_id``/``root_id``/``owner_resource`` decouple
  nested stacks from their parent.
* every ``resources`` row is one *version* of a logical resource, bound to
  the raw template it was created under, with its ``requires``/``needed_by``
  edges: the dependency graph of every template version is persisted, so old
  versions are cleaned up in the order they were created in.
* ``resources.engine_id`` + ``resources.atomic_key`` are the resource lock:
  every write is ``UPDATE ... WHERE atomic_key = :seen`` so two traversals
  (or a paused and a live conductor) can never both act on one resource.
* ``physical_objects`` is the shared "cloud" the test resource types create
  objects in; its unique ``create_key`` makes a re-run create a no-op.
"""

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase

from nestedflow.db import schema
from nestedflow.db.schema import Json, Timestamp, utcnow  # every table's; used as models.*


class Base(DeclarativeBase):
    # Shared with the Core tables of nestedflow.db.schema.
    metadata = schema.METADATA


class RawTemplate(Base):
    __tablename__ = "raw_templates"

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    template = sa.Column(Json, nullable=False)
    files = sa.Column(Json, nullable=False, default=dict)
    environment = sa.Column(Json, nullable=False, default=dict)
    parameters = sa.Column(Json, nullable=False, default=dict)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)


class Stack(Base):
    # Declared in Core (nestedflow.db.schema): the command line lists stacks
    # without the ORM.
    __table__ = schema.stacks


class Resource(Base):
    __tablename__ = "resources"
    __table_args__ = (
        sa.Index("ix_resources_stack_id_name", "stack_id", "name"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), sa.ForeignKey("stacks.id"), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    type = sa.Column(sa.String(255), nullable=False)
    # The template version this row belongs to; its edges are that version's.
    template_id = sa.Column(sa.Integer, sa.ForeignKey("raw_templates.id"), nullable=False)
    action = sa.Column(sa.String(16), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=False, default="")
    physical_id = sa.Column(sa.String(255))
    properties_data = sa.Column(Json)
    attr_data = sa.Column(Json)
    requires = sa.Column(Json, nullable=False, default=list)
    needed_by = sa.Column(Json, nullable=False, default=list)
    deletion_policy = sa.Column(sa.String(16), nullable=False, default="Delete")
    replaces = sa.Column(sa.Integer)
    replaced_by = sa.Column(sa.Integer)
    current = sa.Column(sa.Boolean, nullable=False, default=True)
    # The resource lock: holder and compare-and-swap key.
    engine_id = sa.Column(sa.String(128))
    atomic_key = sa.Column(sa.Integer, nullable=False, default=0)
    traversal_id = sa.Column(sa.String(36))
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp)


class _DetachedRow:
    """A detached copy of a row: its columns as plain attributes (the
    subclass's ``__slots__``). Handed out instead of ORM instances, which
    cost four times as much to make, on every path a traversal takes."""

    __slots__ = ()

    @classmethod
    def copy(cls, row):
        """From anything with the columns as attributes (another copy, an ORM instance)."""
        new = cls.__new__(cls)
        for key in cls.__slots__:
            setattr(new, key, getattr(row, key))
        return new

    @classmethod
    def from_mapping(cls, mapping):
        """From a Core result row's ``_mapping`` (or a dict of every column)."""
        new = cls.__new__(cls)
        for key in cls.__slots__:
            setattr(new, key, mapping[key])
        return new

    def __repr__(self):
        return f"<{type(self).__name__} {self.id} {self.name!r} {self.action}_{self.status}>"


class ResourceRow(_DetachedRow):
    """A ``resources`` row, as every resource write and read returns it."""

    __slots__ = tuple(column.key for column in Resource.__table__.columns)


class StackRow(_DetachedRow):
    """A ``stacks`` row, as the stack reads and writes of a traversal return it."""

    __slots__ = tuple(column.key for column in Stack.__table__.columns)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (sa.Index("ix_events_stack_id", "stack_id"),)

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_name = sa.Column(sa.String(255))
    resource_id = sa.Column(sa.Integer)
    physical_id = sa.Column(sa.String(255))
    action = sa.Column(sa.String(16), nullable=False)
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=False, default="")
    traversal_id = sa.Column(sa.String(36))
    # Which engine / conductor performed the action.
    engine_id = sa.Column(sa.String(128))
    timestamp = sa.Column(Timestamp, nullable=False, default=utcnow)


class PhysicalObject(Base):
    __tablename__ = "physical_objects"
    __table_args__ = (
        sa.UniqueConstraint("create_key", name="uq_physical_objects_create_key"),
        sa.Index("ix_physical_objects_stack_id", "stack_id"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    create_key = sa.Column(sa.String(255), nullable=False)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_id = sa.Column(sa.Integer)
    resource_name = sa.Column(sa.String(255), nullable=False)
    type = sa.Column(sa.String(255), nullable=False)
    properties = sa.Column(Json, nullable=False)
    data = sa.Column(Json)
    state = sa.Column(sa.String(16), nullable=False, default="ACTIVE")
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp)
    deleted_at = sa.Column(Timestamp)


class CheckResult(Base):
    """One run of a pre- or post-check of a resource action (nestedflow.checks)."""

    __tablename__ = "check_results"
    __table_args__ = (sa.Index("ix_check_results_stack_id", "stack_id"),)

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_name = sa.Column(sa.String(255), nullable=False)
    resource_id = sa.Column(sa.Integer)
    traversal_id = sa.Column(sa.String(36))
    action = sa.Column(sa.String(16), nullable=False)
    #: "pre" or "post".
    phase = sa.Column(sa.String(8), nullable=False)
    check_name = sa.Column(sa.String(255), nullable=False)
    #: The check type (an entry point of nestedflow.checks, or "plugin").
    type = sa.Column(sa.String(255), nullable=False)
    #: "PASS" or "FAIL".
    status = sa.Column(sa.String(8), nullable=False)
    message = sa.Column(sa.Text, nullable=False, default="")
    #: Seconds, every attempt included.
    duration = sa.Column(sa.Float, nullable=False)
    attempts = sa.Column(sa.Integer, nullable=False, default=1)
    timestamp = sa.Column(Timestamp, nullable=False, default=utcnow)


class TraversalPlan(Base):
    """What a re-run or a continue traversal acts on (nestedflow.flows.reruns):
    a job carries only the stack, traversal and action, so a conductor
    building the flow reads the rest here."""

    __tablename__ = "traversal_plans"

    traversal_id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    #: "rerun" or "continue".
    kind = sa.Column(sa.String(16), nullable=False)
    #: Names of the resources to re-run (the selection already expanded).
    resources = sa.Column(Json, nullable=False)
    checks_only = sa.Column(sa.Boolean, nullable=False, default=False)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)


class StackSnapshot(Base):
    """A stack snapshot: Heat's snapshot (``stack snapshot create``) with
    the stack's template, environment, files and each resource's physical
    id, properties and plugin snapshot data in ``data``."""

    __tablename__ = "stack_snapshots"
    __table_args__ = (sa.Index("ix_stack_snapshots_stack_id", "stack_id"),)

    id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255))
    status = sa.Column(sa.String(16), nullable=False)
    status_reason = sa.Column(sa.Text, nullable=False, default="")
    data = sa.Column(Json)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp)


class StackTag(Base):
    """One tag of a stack (Heat's ``stack_tag`` table): list filters join it."""

    __table__ = schema.stack_tags


class TraversalRequest(Base):
    """The request id a traversal was started under (nestedflow.tenancy):
    each event of the traversal is shown with it. Only traversals started
    with a request context have one."""

    __tablename__ = "traversal_requests"

    traversal_id = sa.Column(sa.String(36), primary_key=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    request_id = sa.Column(sa.String(64), nullable=False)

class ResourceSignal(Base):
    """One signal a resource accepted (``Engine.signal_resource``), kept for
    the action that waits for it: a wait condition reads its handle's.
    Bound to the resource row (one version of the resource): a replaced
    handle starts with none, as Heat's UpdateWaitConditionHandle. The
    unique ``signal_key`` makes a signal sent twice (a retried call) count
    once."""

    __tablename__ = "resource_signals"
    __table_args__ = (
        sa.UniqueConstraint("resource_id", "signal_key", name="uq_resource_signals_key"),
        sa.Index("ix_resource_signals_stack_id", "stack_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_id = sa.Column(sa.Integer, nullable=False)
    resource_name = sa.Column(sa.String(255), nullable=False)
    signal_key = sa.Column(sa.String(255), nullable=False)
    details = sa.Column(Json)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)


class ResourceHook(Base):
    """A breakpoint (Heat's hook) a resource action reached: the action
    waits until ``cleared_at`` is set by a signal ``{"unset_hook": hook}``.
    One per resource row, hook and traversal, so a re-run of the action
    after a crash finds it (cleared or not) instead of pausing anew."""

    __tablename__ = "resource_hooks"
    __table_args__ = (
        sa.UniqueConstraint("resource_id", "hook", "traversal_id",
                            name="uq_resource_hooks_reached"),
        sa.Index("ix_resource_hooks_stack_id", "stack_id"),
    )

    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id = sa.Column(sa.String(36), nullable=False)
    resource_id = sa.Column(sa.Integer, nullable=False)
    resource_name = sa.Column(sa.String(255), nullable=False)
    hook = sa.Column(sa.String(16), nullable=False)
    traversal_id = sa.Column(sa.String(36), nullable=False)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    cleared_at = sa.Column(Timestamp)


class EngineHeartbeat(Base):
    """A live embedded engine (as Heat's ``service`` table): the runs it
    owns are named ``<id>@<random>``, so a stack left IN_PROGRESS by an
    engine whose heartbeat stopped is known to be orphaned."""

    __tablename__ = "engine_heartbeats"

    id = sa.Column(sa.String(64), primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    pid = sa.Column(sa.Integer, nullable=False)
    #: The program the engine runs in (Heat's service ``binary``).
    binary = sa.Column(sa.String(255))
    #: Seconds between beats: the engine counts as dead after three missed.
    report_interval = sa.Column(sa.Float, nullable=False)
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp, nullable=False, default=utcnow)


class SoftwareConfig(Base):
    """A stored software config (Heat's ``software_config`` table,
    heat/db/models.py): immutable once created; ``config`` holds the
    ``config``, ``inputs``, ``outputs`` and ``options`` Heat keeps there."""

    __tablename__ = "software_config"
    __table_args__ = (sa.Index("ix_software_config_tenant", "tenant"),)

    id = sa.Column(sa.String(36), primary_key=True)
    name = sa.Column(sa.String(255))
    group = sa.Column(sa.String(255))
    config = sa.Column(Json)
    #: The owning project (None: the embedded default's local project).
    tenant = sa.Column(sa.String(64))
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp)


class SoftwareDeployment(Base):
    """A config applied to one server (Heat's ``software_deployment`` table)."""

    __tablename__ = "software_deployment"
    __table_args__ = (
        sa.Index("ix_software_deployment_created_at", "created_at"),
        sa.Index("ix_software_deployment_server_id", "server_id"),
        sa.Index("ix_software_deployment_tenant", "tenant"),
    )

    id = sa.Column(sa.String(36), primary_key=True)
    config_id = sa.Column(sa.String(36), sa.ForeignKey("software_config.id"), nullable=False)
    server_id = sa.Column(sa.String(36), nullable=False)
    input_values = sa.Column(Json)
    output_values = sa.Column(Json)
    action = sa.Column(sa.String(255))
    status = sa.Column(sa.String(255))
    status_reason = sa.Column(sa.Text)
    tenant = sa.Column(sa.String(64))
    stack_user_project_id = sa.Column(sa.String(64))
    created_at = sa.Column(Timestamp, nullable=False, default=utcnow)
    updated_at = sa.Column(Timestamp)
