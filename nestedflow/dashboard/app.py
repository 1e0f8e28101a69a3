"""The dashboard's WSGI application: pages, their JSON and live views. Read-only.

Routes (every one ``GET`` or ``HEAD``; any other method is refused with
405, whatever the path, so nothing a browser or a script sends can change
a stack):

======================================  ==========================================
``/``                                   the stack list page
``/stacks/<stack>``                     one stack's page (graph, events, data)
``/static/<file>``                      the pages' scripts and style
``/api/stacks?status=&project=&name=``  the stack list, nested stacks folded
``/api/stacks/<stack>``                 the tree's stacks and resources
``/api/stacks/<stack>/events?...``      events (filters: resource, action,
                                        status, conductor, text)
``/api/stacks/<stack>/data``            template, environment, outputs
``/api/stacks/<stack>/live``            server-sent events of the tree
``/api/live``                           server-sent events of stack states
======================================  ==========================================

``<stack>`` is a stack's id or name, found through the engine's tenancy.
"""

import json
import logging
import mimetypes
import pathlib
import urllib.parse

from nestedflow import exceptions

LOG = logging.getLogger(__name__)

STATIC = pathlib.Path(__file__).parent / "static"
READ_METHODS = ("GET", "HEAD")
_HEADERS = [
    # Everything the pages load comes from here: no inline script, no
    # other origin (the machine it runs on may have no internet anyway).
    ("Content-Security-Policy",
     "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]
_PAGES = {"": "index.html", "stacks": "stack.html"}


_error = exceptions.DashboardRefusal


class Dashboard:
    """The WSGI application (see the module docstring).

    ``reader``: a :class:`nestedflow.dashboard.reads.Reader`; ``feed``: a
    started :class:`nestedflow.dashboard.live.LiveFeed`; ``conf``: the
    configuration with the ``[dashboard]`` group.
    """

    def __init__(self, reader, feed, conf):
        self.reader = reader
        self.feed = feed
        self.conf = conf

    def __call__(self, environ, start_response):
        try:
            status, headers, body = self._answer(environ)
        except exceptions.DashboardRefusal as refusal:
            status, body = refusal.status, json.dumps({"error": str(refusal)}).encode()
            headers = [("Content-Type", "application/json"),
                       ("Cache-Control", "no-store"), *refusal.headers]
        except Exception:
            LOG.exception("dashboard request %s failed", environ.get("PATH_INFO"))
            status, body = "500 Internal Server Error", b'{"error": "internal error"}'
            headers = [("Content-Type", "application/json")]
        headers = [*headers, *_HEADERS]
        if isinstance(body, bytes):
            headers.append(("Content-Length", str(len(body))))
            if environ["REQUEST_METHOD"] == "HEAD":
                body = b""
            body = [body]
        start_response(status, headers)
        return body

    # -- routing --------------------------------------------------------------

    def _answer(self, environ):
        method = environ["REQUEST_METHOD"]
        if method not in READ_METHODS:
            raise _error("405 Method Not Allowed", "the dashboard is read-only",
                         headers=[("Allow", ", ".join(READ_METHODS))])
        path = environ.get("PATH_INFO") or "/"
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")] if path != "/" \
            else [""]
        query = {key: values[-1] for key, values in urllib.parse.parse_qs(
            environ.get("QUERY_STRING") or "").items()}
        if parts[0] == "static" and len(parts) == 2:
            return self._static(parts[1])
        if parts[0] in _PAGES and len(parts) == (1 if parts[0] == "" else 2):
            return self._static(_PAGES[parts[0]], cache=False)
        if parts[0] != "api":
            raise _error("404 Not Found", f"no page {path}")
        context = self._context(environ)
        route = parts[1:]
        if route == ["live"]:
            project = context.project_id if context is not None and not context.is_admin \
                else None
            return self._stream(self.feed.open_list(self._keepalive(), project))
        if not route or route[0] != "stacks" or len(route) > 3:
            raise _error("404 Not Found", f"no API {path}")
        if len(route) == 1:
            return _json(self.reader.stacks(context, status=query.get("status"),
                                            project=query.get("project"),
                                            name=query.get("name")))
        stack, what = route[1], (route[2] if len(route) == 3 else "")
        try:
            if what == "":
                return _json(self.reader.stack(stack, context))
            if what == "events":
                return _json(self.reader.events(
                    stack, context, resource=query.get("resource"), action=query.get("action"),
                    status=query.get("status"), conductor=query.get("conductor"),
                    text=query.get("text")))
            if what == "data":
                return _json(self.reader.data(stack, context))
            if what == "live":
                return self._live(stack, context)
        except exceptions.StackNotFound as error:
            raise _error("404 Not Found", str(error)) from None
        raise _error("404 Not Found", f"no API {path}")

    def _context(self, environ):
        """The viewer's request context: None (sees every stack) unless the
        proxy's headers are trusted."""
        section = self.conf.dashboard
        if not section.trust_proxy_headers:
            return None
        from oslo_context import context

        found = context.RequestContext.from_environ(environ, overwrite=False)
        found.is_admin = bool(set(found.roles) & set(section.admin_roles))
        if not found.is_admin and not found.project_id:
            raise _error("403 Forbidden", "the authenticating proxy sent no X-Project-Id")
        return found

    def _keepalive(self):
        return self.conf.dashboard.keepalive_interval

    def _live(self, stack, context):
        root = self.reader.find_root(stack, context)
        return self._stream(self.feed.open_tree(root.id, self._keepalive()))

    def _stream(self, view):
        if self.feed.views > self.conf.dashboard.max_live_views:
            view.close()
            raise _error("503 Service Unavailable", "too many live views open",
                         headers=[("Retry-After", "30")])
        headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
                   # nginx buffers responses unless told not to.
                   ("X-Accel-Buffering", "no")]
        return "200 OK", headers, _Closing(view)

    def _static(self, name, cache=True):
        path = (STATIC / name).resolve()
        if path.parent != STATIC.resolve() or not path.is_file():
            raise _error("404 Not Found", f"no file {name}")
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type.endswith("javascript"):
            content_type += "; charset=utf-8"
        headers = [("Content-Type", content_type),
                   ("Cache-Control", "max-age=300" if cache else "no-store")]
        return "200 OK", headers, path.read_bytes()


class _Closing:
    """A live view as a WSGI body: the server calls close() when the browser goes."""

    def __init__(self, view):
        self._view = view

    def __iter__(self):
        return iter(self._view)

    def close(self):
        self._view.close()


def _json(value):
    body = json.dumps(value, separators=(",", ":")).encode()
    return "200 OK", [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body
