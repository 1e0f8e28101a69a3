"""The tables a reader without the ORM needs, in SQLAlchemy Core.

``nestedflow stack list`` reads ``stacks`` and ``stack_tags`` through
:mod:`nestedflow.db.core_reads`, which imports neither ``sqlalchemy.orm``
nor :mod:`nestedflow.db.models`: declaring the ORM classes costs about
0.07 s of CPU (``sqlalchemy.orm`` alone 0.05 s, ``-X importtime``) of the
0.48 s that command took before this split. :mod:`.models` maps
its ``Stack`` and ``StackTag`` classes onto these tables and declares
the others itself; every table shares :data:`METADATA`, which the
migrations compare against.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

METADATA = sa.MetaData()


def utcnow():
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


# MySQL's DATETIME drops fractions unless asked; event ordering needs them.
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
# Templates and attribute data can be large; MySQL's JSON is LONGTEXT already.
Json = sa.JSON().with_variant(mysql.JSON(), "mysql", "mariadb")


stacks = sa.Table(
    "stacks", METADATA,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id"),
              nullable=False),
    sa.Column("prev_raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id")),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("status_reason", sa.Text, nullable=False, default=""),
    sa.Column("current_traversal", sa.String(36), nullable=False),
    # The run (job claim) of the current traversal allowed to write: a
    # conductor that lost its claim while paused is fenced off by this.
    sa.Column("traversal_owner", sa.String(64)),
    # When a live engine last took an unposted traversal over to post it
    # (the outbox): restarts the clock after which that post counts as
    # failed, so a second engine does not post it again meanwhile.
    sa.Column("outbox_taken_at", Timestamp),
    # "rollback" or "stop" while a cancel of the current traversal is pending.
    sa.Column("cancel_requested", sa.String(16)),
    # Bumped on every state write: a writer that read an older value lost.
    sa.Column("atomic_key", sa.Integer, nullable=False, default=0),
    sa.Column("disable_rollback", sa.Boolean, nullable=False, default=False),
    sa.Column("timeout", sa.Integer),
    sa.Column("outputs", Json),
    # Output name -> why its value is None (Heat's output_error).
    sa.Column("output_errors", Json),
    sa.Column("parent_id", sa.String(36)),
    sa.Column("root_id", sa.String(36)),
    sa.Column("owner_resource", sa.String(255)),
    sa.Column("nested_depth", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", Timestamp, nullable=False, default=utcnow),
    sa.Column("updated_at", Timestamp),
    sa.Column("deleted_at", Timestamp),
    # Tenancy (nestedflow.tenancy): NULL is the embedded default's
    # one local project. A nested stack has its parent's.
    sa.Column("project_id", sa.String(64)),
    sa.Column("user_id", sa.String(64)),
    # The request context (no token) of the action in progress: what its
    # plugins, logs and notifications are given, in whichever process runs it.
    sa.Column("request_context", Json),
    sa.Index("ix_stacks_name", "name"),
    sa.Index("ix_stacks_parent_id", "parent_id"),
    sa.Index("ix_stacks_root_id", "root_id"),
    sa.Index("ix_stacks_project_id", "project_id"),
)

#: One tag of a stack (Heat's ``stack_tag`` table): list filters join it.
stack_tags = sa.Table(
    "stack_tags", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("stack_id", sa.String(36), nullable=False),
    sa.Column("tag", sa.String(80), nullable=False),
    sa.Index("ix_stack_tags_stack_id", "stack_id"),
    sa.Index("ix_stack_tags_tag", "tag"),
)
