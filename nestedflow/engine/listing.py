"""Listing stacks: the live stack rows, their tags, Heat's tag filters.

:meth:`nestedflow.engine.service.Engine.list_stacks` lists through its
database; :class:`StackReader` lists the same way without an Engine, on a
:class:`nestedflow.db.core_reads.CoreReader` -- what ``nestedflow stack
list`` uses on a current SQLite database, so that it imports neither the
ORM, oslo.db nor anything a traversal needs (doc/source/performance.rst,
"Command-line start-up").
"""

from nestedflow.engine import tenancy, views
from nestedflow.engine.tags import check_tags
from nestedflow.engine.tags import matches as tag_filter


def list_stacks(db, tags_of, show_nested=False, context=None, **tag_filters):
    """Live stacks of ``db`` (its ``list_stacks`` rows) as views, oldest
    first, their tags read with ``tags_of(stack_ids)``; ``tag_filters``
    are Engine.list_stacks's four (lists or comma-separated strings)."""
    filters = {name: check_tags(value, name) for name, value in tag_filters.items()}
    rows = db.list_stacks(show_nested, scoped=tenancy.is_scoped(context),
                          project_id=context and context.project_id)
    tagged = tags_of([row.id for row in rows])
    return [views.Stack.from_row(row, tagged[row.id]) for row in rows
            if tag_filter(tagged[row.id], **filters)]


class StackReader:
    """Engine.list_stacks on a CoreReader (see the module docstring)."""

    def __init__(self, db):
        self.db = db

    def list_stacks(self, show_nested=False, tags=None, tags_any=None, not_tags=None,
                    not_tags_any=None, context=None):
        """As :meth:`nestedflow.engine.service.Engine.list_stacks`."""
        return list_stacks(self.db, self.db.tags_of, show_nested, context, tags=tags,
                           tags_any=tags_any, not_tags=not_tags, not_tags_any=not_tags_any)

    def close(self):
        self.db.dispose()
