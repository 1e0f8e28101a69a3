"""check results of resource pre- and post-checks

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import TIMESTAMP

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# Frozen copy of the column type as it was at this revision.


def upgrade():
    op.create_table(
        "check_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=True),
        sa.Column("traversal_id", sa.String(length=36), nullable=True),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("phase", sa.String(length=8), nullable=False),
        sa.Column("check_name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("timestamp", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("check_results", schema=None) as batch_op:
        batch_op.create_index("ix_check_results_stack_id", ["stack_id"], unique=False)


def downgrade():
    op.drop_table("check_results")
