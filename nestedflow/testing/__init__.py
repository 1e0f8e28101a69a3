"""Helpers for tests and people checking what a stack really left behind.

:mod:`nestedflow.testing.stepped` is the deterministic simulator of
traversals (imported on its own: it loads the whole engine).
"""


def physical_objects(engine, stack_id=None):
    """Live physical objects (of the built-in test types) in ``engine``'s database.

    Each has ``id``, ``stack_id``, ``resource_name``, ``type``, ``properties``
    and ``state``. ``stack_id`` narrows the list to one stack.
    """
    return engine.store.live(stack_id)


def stored_rows(engine):
    """``{table: row count}`` of the stacks, resources, raw_templates and
    events tables: equal before and after a refused call when nothing was
    stored."""
    from nestedflow.db import models

    counts = {}
    with engine.db.reader() as session:
        for model in (models.Stack, models.Resource, models.RawTemplate, models.Event):
            counts[model.__table__.name] = session.query(model).count()
    return counts
