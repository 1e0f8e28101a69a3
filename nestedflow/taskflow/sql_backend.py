"""TaskFlow's SQL persistence sharing nestedflow's database engine.

Its own module so that importing the database layer (all a read needs)
does not import TaskFlow.
"""

from taskflow.persistence.backends import impl_sqlalchemy


class TaskflowBackend(impl_sqlalchemy.SQLAlchemyBackend):
    """TaskFlow's SQL backend handing out one connection object.

    Its connections are stateless views of the engine (``close`` does
    nothing), but each new one describes the tables anew, which costs more
    than most reads it serves and defeats SQLAlchemy's statement cache.
    """

    _shared = None

    def get_connection(self):
        if self._shared is None:
            self._shared = super().get_connection()
        return self._shared

    def close(self):
        self._shared = None
        super().close()
