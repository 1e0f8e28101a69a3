"""heartbeats of embedded engines (orphaned-stack recovery)

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import TIMESTAMP

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# Frozen copy of the column type as it was at this revision.


def upgrade():
    op.create_table(
        "engine_heartbeats",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("report_interval", sa.Float(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade():
    op.drop_table("engine_heartbeats")
