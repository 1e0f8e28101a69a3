"""stack snapshots and stack tags

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON, TIMESTAMP

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "stack_snapshots",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("data", JSON, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stack_snapshots", schema=None) as batch_op:
        batch_op.create_index("ix_stack_snapshots_stack_id", ["stack_id"], unique=False)
    op.create_table(
        "stack_tags",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("tag", sa.String(length=80), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stack_tags", schema=None) as batch_op:
        batch_op.create_index("ix_stack_tags_stack_id", ["stack_id"], unique=False)
        batch_op.create_index("ix_stack_tags_tag", ["tag"], unique=False)


def downgrade():
    op.drop_table("stack_tags")
    op.drop_table("stack_snapshots")
