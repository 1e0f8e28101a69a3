"""traversal requests: the request id each traversal was started under

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 20:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "traversal_requests",
        sa.Column("traversal_id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("traversal_id"),
    )


def downgrade():
    op.drop_table("traversal_requests")
