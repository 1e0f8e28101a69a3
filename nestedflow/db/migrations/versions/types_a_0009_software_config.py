"""software-config store (Heat's software_config and software_deployment)

Revision ID: types_a_0009
Revises: types_b_0009
"""

import sqlalchemy as sa
from alembic import op

from nestedflow.db.migrations.column_types import JSON, TIMESTAMP

revision = "types_a_0009"
down_revision = "types_b_0009"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "software_config",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("group", sa.String(length=255), nullable=True),
        sa.Column("config", JSON, nullable=True),
        sa.Column("tenant", sa.String(length=64), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("software_config", schema=None) as batch_op:
        batch_op.create_index("ix_software_config_tenant", ["tenant"], unique=False)
    op.create_table(
        "software_deployment",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("config_id", sa.String(length=36), nullable=False),
        sa.Column("server_id", sa.String(length=36), nullable=False),
        sa.Column("input_values", JSON, nullable=True),
        sa.Column("output_values", JSON, nullable=True),
        sa.Column("action", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=255), nullable=True),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("tenant", sa.String(length=64), nullable=True),
        sa.Column("stack_user_project_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(["config_id"], ["software_config.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("software_deployment", schema=None) as batch_op:
        batch_op.create_index("ix_software_deployment_created_at", ["created_at"],
                              unique=False)
        batch_op.create_index("ix_software_deployment_server_id", ["server_id"],
                              unique=False)
        batch_op.create_index("ix_software_deployment_tenant", ["tenant"], unique=False)


def downgrade():
    op.drop_table("software_deployment")
    op.drop_table("software_config")
