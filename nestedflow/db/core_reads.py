"""Stack reads in SQLAlchemy Core, and a reader that runs them without oslo.db.

The queries are the database's own: :class:`nestedflow.db.api.Database`
(``list_stacks``) and :class:`nestedflow.db.snapshots.TagStore` run them
through oslo.db. :class:`CoreReader` runs them on a plain SQLAlchemy
engine, importing neither ``sqlalchemy.orm``, oslo.db nor
:mod:`nestedflow.db.models`: ``nestedflow stack list`` on an SQLite file
took 0.48 s of CPU, about 0.15 s of it importing those and setting up
oslo.db's engine (see doc/source/performance.rst, "Command-line start-up").
"""

import sqlalchemy as sa

from nestedflow.db import migration, schema


def live_stacks(show_nested=False, project_id=None, scoped=False, show_deleted=False):
    """The SELECT of the live stacks (``scoped``: of ``project_id`` only;
    ``show_deleted``: deleted ones too), oldest first."""
    stacks = schema.stacks
    query = sa.select(stacks)
    if not show_deleted:
        query = query.where(stacks.c.deleted_at.is_(None))
    if scoped:
        query = query.where(stacks.c.project_id.is_not_distinct_from(project_id))
    if not show_nested:
        query = query.where(stacks.c.parent_id.is_(None))
    return query.order_by(stacks.c.created_at)


def tags_of(conn, stack_ids):
    """stack id -> its tags (in the order they were given), for ``stack_ids``."""
    tags = {stack_id: [] for stack_id in stack_ids}
    rows = conn.execute(_TAGS_OF, {"stack_ids": list(tags)})
    for stack_id, tag in rows:
        tags[stack_id].append(tag)
    return tags


# Built once: read with every stack shown or listed.
_TAGS_OF = (sa.select(schema.stack_tags.c.stack_id, schema.stack_tags.c.tag)
            .where(schema.stack_tags.c.stack_id.in_(sa.bindparam("stack_ids", expanding=True)))
            .order_by(schema.stack_tags.c.id))


class CoreReader:
    """Reads of one SQLite database on a plain SQLAlchemy engine.

    SQLite only: nothing oslo.db sets up on a connection (its ``[database]``
    options: SQLite's ``synchronous`` and foreign-key pragmas, a REGEXP
    function) changes what a read returns, and nestedflow's own tuning
    (:mod:`.drivers`: IMMEDIATE transactions, one pool) is for writers. On
    a server, ``connection_parameters`` or ``mysql_wsrep_sync_wait`` could
    change how the connection is made or what a read sees: there the
    Engine reads, through oslo.db.
    """

    def __init__(self, url):
        #: The URL as every component uses it (the busy timeout added).
        self.url = url
        self._engine = sa.create_engine(url)

    @classmethod
    def open(cls, url):
        """A reader of ``url`` if it is an SQLite database whose schema is
        current, else None: a server's, or one only the Engine (which
        migrates it) may use. DatabaseUnavailable, naming the cause, if
        the URL is malformed or the database cannot be opened."""
        url = migration.normalize_url(url)
        if not sa.engine.make_url(url).drivername.startswith("sqlite"):
            return None
        reader, current = cls(url), False
        try:
            current = migration.is_current(reader._engine)
        finally:
            if not current:
                reader.dispose()
        return reader if current else None

    def list_stacks(self, show_nested=False, project_id=None, scoped=False, show_deleted=False):
        """As :meth:`nestedflow.db.api.Database.list_stacks` (rows of ``stacks``)."""
        with self._engine.connect() as conn:
            return list(conn.execute(live_stacks(show_nested, project_id, scoped,
                                                 show_deleted)))

    def tags_of(self, stack_ids):
        """As :meth:`nestedflow.db.snapshots.TagStore.of`."""
        if not stack_ids:
            return {}
        with self._engine.connect() as conn:
            return tags_of(conn, stack_ids)

    def dispose(self):
        self._engine.dispose()
