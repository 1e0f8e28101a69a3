"""Making the dashboard's WSGI application, and serving it with cheroot.

:func:`make_app` is what a host mounts (any WSGI server, any path prefix
through ``SCRIPT_NAME``: the pages use relative URLs); :class:`Server`
is what ``nestedflow dashboard`` runs: cheroot's threaded WSGI server
(CherryPy's), which writes each chunk a live view yields at once.
"""

import logging
import threading

from nestedflow import exceptions
from nestedflow.dashboard import app as dashboard_app
from nestedflow.dashboard import live, reads

LOG = logging.getLogger(__name__)


def make_app(conf=None, db_url=None, engine=None, transport_url=None):
    """The dashboard's WSGI application, its live feed started.

    ``engine``: a host's :class:`nestedflow.Engine`, whose database it
    reads and, when no broker carries notifications, whose notifications
    it follows in-process. Otherwise ``db_url`` (default: ``[database]
    connection``) is opened read-only: the dashboard never migrates it.
    Call the application's ``close()`` when done.
    """
    if conf is None:
        from nestedflow.conf import CONF as conf
    own_db = None
    if engine is not None:
        db = engine.db
    else:
        import sqlalchemy as sa

        from nestedflow.db import migration
        from nestedflow.db.api import Database

        db = own_db = Database(db_url or conf.database.connection)
        if not migration.is_current(db.sql_engine):
            db.dispose()
            shown = sa.engine.make_url(db.url).render_as_string(hide_password=True)
            raise exceptions.NestedflowError(
                f"the database {shown} is not at nestedflow's current "
                "schema: run 'nestedflow db sync' first (the dashboard only reads)")
    feed = live.LiveFeed(db, conf, transport_url=transport_url, engine=engine)
    feed.start()
    application = dashboard_app.Dashboard(reads.Reader(db), feed, conf)

    def close():
        feed.close()
        if own_db is not None:
            own_db.dispose()

    application.close = close
    return application


class Server:
    """cheroot serving ``application`` on ``host``:``port`` (0: a free port)."""

    def __init__(self, application, host, port, threads):
        from cheroot import wsgi

        self.application = application
        self._server = wsgi.Server((host, port), application, numthreads=threads,
                                   max=threads, server_name="nestedflow-dashboard",
                                   shutdown_timeout=5)
        self._thread = None

    @property
    def url(self):
        host, port = self._server.bind_addr[:2]
        return f"http://{host}:{port}/"

    def start(self):
        """Listen (the port is bound when this returns) and serve in a thread."""
        self._server.prepare()
        self._thread = threading.Thread(target=self._server.serve, name="dashboard-http",
                                        daemon=True)
        self._thread.start()
        LOG.info("dashboard at %s", self.url)
        return self

    def stop(self):
        # Live views end first: their threads would hold the server's stop.
        self.application.close()
        self._server.stop()
        if self._thread is not None:
            self._thread.join(10)
