"""The migrations build the schema the models describe, on every database.

``nestedflow db sync`` runs revisions 0001.. in order; the engine then
uses ``nestedflow.db.models``. Alembic's autogenerate comparison of the
two (column types included) must find nothing: a model change without
its revision, or a revision that drifted from the model, fails here.
TaskFlow's own journal tables are left to TaskFlow's schema.
"""

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from nestedflow.db import migration, models

pytestmark = pytest.mark.functional


def test_migrated_schema_equals_the_models(db_url):
    ours = set(models.Base.metadata.tables)

    def ours_only(obj, name, kind, reflected, compare_to):
        if kind == "table":
            return name in ours
        table = getattr(obj, "table", None)
        return table is None or table.name in ours

    engine = sa.create_engine(migration.db_sync(db_url))
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"include_object": ours_only, "compare_type": True})
            assert compare_metadata(context, models.Base.metadata) == []
            tables = set(sa.inspect(conn).get_table_names())
        assert ours <= tables, ours - tables
    finally:
        engine.dispose()
