"""TaskFlow's SQL persistence sharing nestedflow's database engine.

In the TaskFlow adapter, not in ``db``: importing the database layer (all
a read needs) does not import TaskFlow, and only this package reaches into
``taskflow.persistence.backends``.
"""

from taskflow.persistence.backends import impl_sqlalchemy


class TaskflowBackend(impl_sqlalchemy.SQLAlchemyBackend):
    """TaskFlow's SQL backend handing out one connection object.

    Its connections are stateless views of the engine (``close`` does
    nothing), but each new one describes the tables anew, which costs more
    than most reads it serves and defeats SQLAlchemy's statement cache.
    """

    _shared = None

    @classmethod
    def for_database(cls, db):
        """TaskFlow's SQL persistence on ``db`` (a :class:`nestedflow.db.api.
        Database`), sharing its engine: TaskFlow's writes then follow the
        same SQLite locking discipline as ours instead of failing with
        "database is locked"."""
        return cls({"connection": db.url}, engine=db.sql_engine)

    def get_connection(self):
        if self._shared is None:
            self._shared = super().get_connection()
        return self._shared

    def close(self):
        self._shared = None
        super().close()
