"""ResidentService: an Engine served on a local socket to the command line.

``nestedflow-engine`` runs it beside its oslo.messaging services; the
client, the wire format and why a socket are in
:mod:`nestedflow.rpc.resident_client`. Each connection gets a thread (a
command holds one connection; a ``wait`` blocks only its own thread), and
each request is dispatched to the Engine as an RPC call is
(:class:`nestedflow.rpc.service.EngineEndpoint`'s rules: the methods of
:data:`~nestedflow.rpc.methods.METHODS` only, nestedflow errors as
:class:`~nestedflow.exceptions.RemoteFailure`).
"""

import contextlib
import logging
import os
import socket
import socketserver
import threading

from nestedflow import exceptions
from nestedflow.db import migration
from nestedflow.messaging.serializer import ContextSerializer
from nestedflow.rpc import methods, wire

LOG = logging.getLogger(__name__)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        service = self.server.service
        for line in self.rfile:
            self.wfile.write(wire.dumps(service.answer(wire.loads(line))))
            self.wfile.flush()


class _Server(socketserver.ThreadingUnixStreamServer):
    # A command that went away (Ctrl-C during a wait) must not keep the
    # engine from stopping.
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Only the connection failed here (a command gone mid-answer, a line
        # that is not JSON): answer() reports the engine's own errors.
        LOG.debug("resident engine connection closed", exc_info=True)


class ResidentService:
    """The ``engine`` at ``path``; start(), stop(), wait() as EngineService."""

    def __init__(self, engine, path):
        self.engine = engine
        self.path = path
        self._server = None
        self._thread = None
        self._context = ContextSerializer()

    def start(self):
        """Listen, unless another live engine already does (then False)."""
        if self._served_elsewhere():
            LOG.warning("resident engine socket %s is served by another engine; "
                        "not listening on it", self.path)
            return False
        # Owner only from the first instant: the engine runs what it is sent.
        umask = os.umask(0o177)
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)  # left by an engine that died
            self._server = _Server(self.path, _Handler)
        except OSError as error:
            # The RPC API (if any) still serves; the command line falls back.
            LOG.error("resident engine cannot listen on %s: %s", self.path, error)
            return False
        finally:
            os.umask(umask)
        self._server.service = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="resident-engine", daemon=True)
        self._thread.start()
        LOG.info("resident engine listening on %s", self.path)
        return True

    def _served_elsewhere(self):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(self.path)
        except OSError:
            return False
        finally:
            probe.close()
        return True

    def stop(self):
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def wait(self):
        if self._thread is not None:
            self._thread.join()

    # -- one request ----------------------------------------------------------

    def answer(self, request):
        """``{"result": ...}`` or ``{"error": RemoteFailure's arguments}``."""
        try:
            if "hello" in request:
                return {"result": self._hello(request["hello"])}
            return {"result": self._dispatch(request)}
        except exceptions.NestedflowError as error:
            failure = exceptions.to_remote(error)
        except Exception as error:
            # As the RPC service: logged here with its traceback, its
            # message to the client (which the command prints, exit 1).
            LOG.exception("resident engine request %s failed", request.get("method"))
            failure = exceptions.RemoteFailure(type(error).__name__, str(error))
        return {"error": {"class_name": failure.class_name, "message": failure.message,
                          "attributes": failure.attributes}}

    def _hello(self, hello):
        wanted = migration.normalize_url(hello.get("database"))
        if wanted != self.engine.db.url:
            raise exceptions.ResidentEngineUnavailable(
                self.path, "it serves another database")
        return {"pid": os.getpid(), "version": methods.VERSION}

    def _dispatch(self, request):
        name = request.get("method")
        if name not in methods.METHODS:
            raise exceptions.NotSupported(f"resident engine method {name!r}")
        context = self._context.deserialize_context(request.get("context"))
        return getattr(self.engine, name)(*request.get("args", ()), context=context,
                                          **request.get("kwargs", {}))

