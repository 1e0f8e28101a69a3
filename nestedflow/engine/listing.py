"""Listing stacks: the live stack rows, their tags, Heat's tag filters.

:meth:`nestedflow.engine.service.Engine.list_stacks` lists through its
database; :class:`StackReader` lists the same way without an Engine, on a
:class:`nestedflow.db.core_reads.CoreReader` -- what ``nestedflow stack
list`` uses on a current SQLite database, so that it imports neither the
ORM, oslo.db nor anything a traversal needs (doc/source/performance.rst,
"Command-line start-up").
"""

from nestedflow import tenancy
from nestedflow.engine import views
from nestedflow.engine.tags import check_tags
from nestedflow.engine.tags import matches as tag_filter

#: [engine] hidden_stack_tags's default (Heat's), for readers without oslo.config.
HIDDEN_STACK_TAGS = ("data-processing-cluster",)


def list_stacks(db, tags_of, show_nested=False, context=None, show_deleted=False,
                show_hidden=False, hidden_tags=HIDDEN_STACK_TAGS, **tag_filters):
    """Live stacks of ``db`` (its ``list_stacks`` rows) as views, oldest
    first, their tags read with ``tags_of(stack_ids)``; ``tag_filters``
    are Engine.list_stacks's four (lists or comma-separated strings).
    ``show_deleted`` adds deleted stacks; stacks tagged with one of
    ``hidden_tags`` are left out unless ``show_hidden`` (heat/db/api.py
    ``_filter_and_page_query``: hidden_stack_tags)."""
    filters = {name: check_tags(value, name) for name, value in tag_filters.items()}
    rows = db.list_stacks(show_nested, scoped=tenancy.is_scoped(context),
                          project_id=context and context.project_id,
                          show_deleted=show_deleted)
    tagged = tags_of([row.id for row in rows])
    hidden = frozenset(() if show_hidden else hidden_tags or ())
    return [views.Stack.from_row(row, tagged[row.id]) for row in rows
            if tag_filter(tagged[row.id], **filters) and not hidden.intersection(tagged[row.id])]


class StackReader:
    """Engine.list_stacks on a CoreReader (see the module docstring)."""

    def __init__(self, db, hidden_tags=HIDDEN_STACK_TAGS):
        self.db = db
        #: [engine] hidden_stack_tags, given: this reader loads no configuration.
        self.hidden_tags = hidden_tags

    def list_stacks(self, show_nested=False, tags=None, tags_any=None, not_tags=None,
                    not_tags_any=None, show_deleted=False, show_hidden=False, context=None):
        """As :meth:`nestedflow.engine.service.Engine.list_stacks`."""
        return list_stacks(self.db, self.db.tags_of, show_nested, context, show_deleted,
                           show_hidden, self.hidden_tags, tags=tags, tags_any=tags_any,
                           not_tags=not_tags, not_tags_any=not_tags_any)

    def close(self):
        self.db.dispose()
