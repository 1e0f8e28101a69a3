"""Alembic environment: run with a connection handed in by migration.py."""

from alembic import context

from nestedflow.db import models

config = context.config


def run():
    connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=models.Base.metadata,
        # TaskFlow keeps its own alembic history in the same database under
        # the default table name; ours must not collide with it.
        version_table="nestedflow_alembic_version",
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


run()
