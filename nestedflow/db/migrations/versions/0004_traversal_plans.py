"""plans of re-run and continue traversals

Revision ID: 0004
Revises: 0003

A revision of its own: 0003 had landed (and may have run) before it.
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON, TIMESTAMP

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "traversal_plans",
        sa.Column("traversal_id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("resources", JSON, nullable=False),
        sa.Column("checks_only", sa.Boolean(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("traversal_id"),
    )


def downgrade():
    op.drop_table("traversal_plans")
