"""why each output that could not be resolved has no value

Revision ID: 0006
Revises: 0005

Heat shows an ``output_error`` next to an output whose value is null because
resolving it failed; the stack itself still completes.
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# Frozen copy of the column type as it was at this revision.


def upgrade():
    op.add_column("stacks", sa.Column("output_errors", JSON, nullable=True))


def downgrade():
    with op.batch_alter_table("stacks") as batch:
        batch.drop_column("output_errors")
