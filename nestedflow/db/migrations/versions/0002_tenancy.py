"""tenancy: the project and user a stack belongs to, and the request context
its traversals act under

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24 19:10:00
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("project_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("user_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("request_context", JSON, nullable=True))
        batch_op.create_index("ix_stacks_project_id", ["project_id"], unique=False)


def downgrade():
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.drop_index("ix_stacks_project_id")
        batch_op.drop_column("request_context")
        batch_op.drop_column("user_id")
        batch_op.drop_column("project_id")
