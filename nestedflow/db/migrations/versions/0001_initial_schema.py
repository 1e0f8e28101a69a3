"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21 20:39:40.075830
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON, TIMESTAMP

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():

    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=True),
        sa.Column("resource_id", sa.Integer(), nullable=True),
        sa.Column("physical_id", sa.String(length=255), nullable=True),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("traversal_id", sa.String(length=36), nullable=True),
        sa.Column("engine_id", sa.String(length=128), nullable=True),
        sa.Column("timestamp", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_stack_id", ["stack_id"], unique=False)

    op.create_table(
        "physical_objects",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("create_key", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=True),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("properties", JSON, nullable=False),
        sa.Column("data", JSON, nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.Column("deleted_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("create_key", name="uq_physical_objects_create_key"),
    )
    with op.batch_alter_table("physical_objects", schema=None) as batch_op:
        batch_op.create_index("ix_physical_objects_stack_id", ["stack_id"], unique=False)

    op.create_table(
        "raw_templates",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("template", JSON, nullable=False),
        sa.Column("files", JSON, nullable=False),
        sa.Column("environment", JSON, nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "stacks",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("raw_template_id", sa.Integer(), nullable=False),
        sa.Column("prev_raw_template_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("current_traversal", sa.String(length=36), nullable=False),
        sa.Column("traversal_owner", sa.String(length=64), nullable=True),
        sa.Column("cancel_requested", sa.String(length=16), nullable=True),
        sa.Column("atomic_key", sa.Integer(), nullable=False),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("timeout", sa.Integer(), nullable=True),
        sa.Column("outputs", JSON, nullable=True),
        sa.Column("parent_id", sa.String(length=36), nullable=True),
        sa.Column("root_id", sa.String(length=36), nullable=True),
        sa.Column("owner_resource", sa.String(length=255), nullable=True),
        sa.Column("nested_depth", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.Column("deleted_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["prev_raw_template_id"],
            ["raw_templates.id"],
        ),
        sa.ForeignKeyConstraint(
            ["raw_template_id"],
            ["raw_templates.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.create_index("ix_stacks_name", ["name"], unique=False)
        batch_op.create_index("ix_stacks_parent_id", ["parent_id"], unique=False)
        batch_op.create_index("ix_stacks_root_id", ["root_id"], unique=False)

    op.create_table(
        "resources",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("template_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("physical_id", sa.String(length=255), nullable=True),
        sa.Column("properties_data", JSON, nullable=True),
        sa.Column("attr_data", JSON, nullable=True),
        sa.Column("requires", JSON, nullable=False),
        sa.Column("needed_by", JSON, nullable=False),
        sa.Column("deletion_policy", sa.String(length=16), nullable=False),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("engine_id", sa.String(length=128), nullable=True),
        sa.Column("atomic_key", sa.Integer(), nullable=False),
        sa.Column("traversal_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(
            ["stack_id"],
            ["stacks.id"],
        ),
        sa.ForeignKeyConstraint(
            ["template_id"],
            ["raw_templates.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("resources", schema=None) as batch_op:
        batch_op.create_index("ix_resources_stack_id_name", ["stack_id", "name"], unique=False)
