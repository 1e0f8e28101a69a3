"""resource signals and breakpoints (hooks)

Revision ID: types_b_0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON, TIMESTAMP

revision = "types_b_0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "resource_signals",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("signal_key", sa.String(length=255), nullable=False),
        sa.Column("details", JSON, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("resource_id", "signal_key", name="uq_resource_signals_key"),
    )
    op.create_index("ix_resource_signals_stack_id", "resource_signals", ["stack_id"])
    op.create_table(
        "resource_hooks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("hook", sa.String(length=16), nullable=False),
        sa.Column("traversal_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("cleared_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("resource_id", "hook", "traversal_id",
                            name="uq_resource_hooks_reached"),
    )
    op.create_index("ix_resource_hooks_stack_id", "resource_hooks", ["stack_id"])


def downgrade():
    op.drop_index("ix_resource_hooks_stack_id", table_name="resource_hooks")
    op.drop_table("resource_hooks")
    op.drop_index("ix_resource_signals_stack_id", table_name="resource_signals")
    op.drop_table("resource_signals")
