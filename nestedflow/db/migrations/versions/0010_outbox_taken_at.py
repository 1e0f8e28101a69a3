"""the time an outbox mark was taken over (one repost per traversal)

Revision ID: 0010
Revises: types_a_0009
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import TIMESTAMP

revision = "0010"
down_revision = "types_a_0009"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("outbox_taken_at", TIMESTAMP, nullable=True))


def downgrade():
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.drop_column("outbox_taken_at")
