"""ResidentClient: the command line's way to a running ``nestedflow-engine``.

Every ``nestedflow`` command used to build an Engine in its own process:
about 0.45 s of imports (SQLAlchemy, TaskFlow, oslo.config, oslo.db) and
the engine's lazy build before the first row is written, while a warm
engine creates 1,000 ``OS::Heat::None`` in about 0.13 s. A resident engine
pays that once; the command only has to reach it.

Why a local socket and not the engine's oslo.messaging RPC API
(:class:`nestedflow.rpc.EngineClient`), measured on the development
machine (2 cores, Python 3.11; ``python -X importtime``, wall times of a
fresh interpreter):

* ``import oslo_messaging`` alone takes 0.40 s (it imports oslo.service,
  eventlet, oslo.config, oslo.utils and kombu), and
  ``import nestedflow.rpc.client`` 0.61 s (the API's view classes pull in
  SQLAlchemy): more than the embedded engine's own imports it would save.
* liveness over a broker needs a call that only times out when nobody
  listens on the topic -- seconds of waiting before the fallback, on the
  path the embedded default takes every time.

Here: ``connect()`` on a Unix socket answers at once (``ENOENT`` or
``ECONNREFUSED`` when no engine runs, so ``auto`` falls back to the
embedded engine in microseconds); messages are one JSON document a line
(:mod:`nestedflow.rpc.wire`); this module imports the standard library,
:mod:`nestedflow.rpc.methods` and :mod:`nestedflow.exceptions` only -- no
oslo library, no SQLAlchemy, no TaskFlow. The methods and their arguments
are the engine's own (the RPC API's :data:`~nestedflow.rpc.methods.METHODS`),
errors arrive as the same :mod:`nestedflow.exceptions` classes with the
same messages (:func:`nestedflow.exceptions.from_remote`, as over RPC),
and results as the same views, datetimes and tuples, so a command prints
the same thing either way. The socket is the user's (mode 0600): who can
connect can already run an embedded engine on the same database.

The first message is a hello naming the database the command would use;
an engine serving another one is refused (``auto`` then falls back), so
``--db-url`` never silently reaches the wrong database.
"""

import functools
import os
import re
import socket

from nestedflow import exceptions
from nestedflow.rpc import methods, wire

#: Seconds to connect and to get the hello answered: a live engine on this
#: host answers in milliseconds; one that does not is not worth waiting on.
HELLO_TIMEOUT = 5.0

_RELATIVE_SQLITE = re.compile(r"^(sqlite[^:]*:///)(?!/)(.+)$")


def default_socket_path():
    """``$XDG_RUNTIME_DIR/nestedflow/engine.sock``, else ``engine.sock`` in
    the user's data directory (where the default SQLite file lives)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "nestedflow", "engine.sock")
    import platformdirs

    return os.path.join(platformdirs.user_data_dir("nestedflow"), "engine.sock")


def absolute_db_url(db_url):
    """A relative SQLite path made absolute here: the engine's working
    directory is not the command's."""
    if not db_url:
        return db_url
    match = _RELATIVE_SQLITE.match(db_url)
    if match is None:
        return db_url
    return match.group(1) + os.path.abspath(match.group(2))


class ResidentClient:
    """The engine's methods (:data:`nestedflow.rpc.methods.METHODS`), with
    the Engine's signatures, served by the ``nestedflow-engine`` at ``path``.

    Use :meth:`connect`. Traversals run in the engine's process, so a
    command need not stay to see them through (``runs_in_process`` False,
    as with a jobboard).
    """

    runs_in_process = False

    def __init__(self, sock, path, served):
        self._sock = sock
        self._reader = sock.makefile("rb")
        self.path = path
        #: The hello's answer: ``{"engine": ..., "database": ...}``.
        self.served = served

    @classmethod
    def connect(cls, path, db_url=None, timeout=HELLO_TIMEOUT):
        """A client of the engine at ``path`` that serves ``db_url`` (None:
        the default database); raises ResidentEngineUnavailable otherwise."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError as error:
            sock.close()
            reason = "none runs" if isinstance(
                error, (FileNotFoundError, ConnectionRefusedError)) else error.strerror
            raise exceptions.ResidentEngineUnavailable(path, reason or str(error)) from None
        client = cls(sock, path, None)
        try:
            client.served = client._request({"hello": {"database": absolute_db_url(db_url),
                                                       "version": methods.VERSION}})
        except BaseException:
            client.close()
            raise
        # A wait lasts as long as the stack takes: no timeout after the hello.
        sock.settimeout(None)
        return client

    def __getattr__(self, name):
        if name not in methods.METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        call = functools.partial(self._call, name)
        setattr(self, name, call)
        return call

    def _call(self, method, *args, context=None, **kwargs):
        if context is not None and not isinstance(context, dict):
            context = context.to_dict()  # oslo.context's RequestContext
        return self._request({"method": method, "args": list(args), "kwargs": kwargs,
                              "context": context or None})

    def _request(self, message):
        try:
            self._sock.sendall(wire.dumps(message))
            line = self._reader.readline()
        except OSError as error:
            raise exceptions.ResidentEngineUnavailable(
                self.path, f"connection failed: {error}") from None
        if not line:
            raise exceptions.ResidentEngineUnavailable(self.path,
                                                       "the engine closed the connection")
        answer = wire.loads(line)
        if "error" in answer:
            raise exceptions.from_remote(exceptions.RemoteFailure(**answer["error"]))
        return answer["result"]

    def close(self):
        self._reader.close()
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
