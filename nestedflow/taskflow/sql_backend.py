"""TaskFlow's SQL persistence sharing nestedflow's database engine.

In the TaskFlow adapter, not in ``db``: importing the database layer (all
a read needs) does not import TaskFlow, and only this package reaches into
``taskflow.persistence.backends``.
"""

import importlib.util
import sys


def _lazy_module(name):
    """Import module ``name`` lazily: executed on first attribute access.

    TaskFlow's SQL backend imports its migration module, which imports
    alembic (and alembic Mako): 0.1 s of a cold start. It runs only to
    create TaskFlow's tables, which nestedflow's own migrations do, so a
    process that never upgrades them never needs alembic.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    # Also the parent package's attribute: ``from package import module``
    # then takes it as it is, where the import system would read its
    # ``__spec__`` -- an attribute access, which loads a lazy module.
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)
    return module


_lazy_module("taskflow.persistence.backends.sqlalchemy.migration")

from taskflow.persistence.backends import impl_sqlalchemy  # noqa: E402

from nestedflow.db import retrying  # noqa: E402

#: TaskFlow's connection methods that read or write the journal's rows,
#: tried again on a dropped connection as nestedflow's own calls are
#: (db.retrying): a conductor reading a job's journal on a connection the
#: server had dropped handed the job back, and its tree stalled for the
#: backoff (tests/functional/test_partitions.py). Each is one transaction,
#: and the writes merge by uuid, so running one again is safe.
RETRIED = ("get_logbook", "get_logbooks", "get_flows_for_book", "get_flow_details",
           "get_atom_details", "get_atoms_for_flow", "save_logbook", "update_flow_details",
           "update_atom_details", "destroy_logbook")


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
            conn = super().get_connection()
            for name in RETRIED:
                setattr(conn, name, retrying.on_disconnect(getattr(conn, name)))
            self._shared = conn
        return self._shared

    def close(self):
        self._shared = None
        super().close()
