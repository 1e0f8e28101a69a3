"""the program each engine heartbeat comes from (``orchestration service list``)

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    # Nullable: the rows of engines started before the upgrade have none.
    with op.batch_alter_table("engine_heartbeats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("binary", sa.String(length=255), nullable=True))


def downgrade():
    with op.batch_alter_table("engine_heartbeats", schema=None) as batch_op:
        batch_op.drop_column("binary")
