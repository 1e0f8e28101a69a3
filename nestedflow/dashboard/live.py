"""Live views: nestedflow's notifications in, server-sent events out.

A notification (:mod:`nestedflow.messaging.notifications`, received from
the broker on ``[oslo_messaging_notifications] topics`` or, in a host that
mounts the dashboard next to its engine, through ``Engine.subscribe``) says
that a stack tree changed. The feed's one thread then reads what the tree
recorded since the last such read -- its new events and check results,
one query each, whatever the number of viewers -- and sends it to every
view open on that tree. The database is read when a notification arrives,
never on a timer, so an idle stack costs nothing.

Ids of concurrent transactions can commit out of order (a PostgreSQL
sequence hands 104 to a transaction that commits after 105's), so each
read looks :data:`WINDOW` ids back and sends only what it has not sent.
A page loads its snapshot after its view opened (the view's ``hello``
says when): what the snapshot misses, the view brings, and the page drops
what it already has by id.
"""

import collections
import json
import logging
import queue
import threading
import time
import uuid

from nestedflow.dashboard import reads
from nestedflow.db import feeds

LOG = logging.getLogger(__name__)

#: Ids a read looks back below the highest one sent (see the module docstring).
WINDOW = 500
#: Seconds a notification waits for others, so a burst makes one read.
BATCH = 0.15
#: Messages a slow viewer may have queued before its view is closed (its
#: browser reconnects and reloads).
VIEW_QUEUE = 500
_ROOTS_CACHED = 4096
_CLOSE = object()


def sse(event, data):
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class View:
    """One browser's live view: an iterator of server-sent events (the WSGI body)."""

    def __init__(self, feed, key, keepalive, project=None):
        self._feed = feed
        self.key = key
        #: The viewer's project when scoped (stack list views filter on it).
        self.project = project
        self._queue = queue.Queue(VIEW_QUEUE)
        self._keepalive = keepalive
        self._closed = False

    def put(self, message):
        try:
            self._queue.put_nowait(message)
        except queue.Full:
            LOG.warning("live view too slow, closing it")
            self.close()

    def close(self):
        if not self._closed:
            self._closed = True
            self._feed._drop(self)
            # A full queue: the reader is gone or stalled; it ends at the
            # next keep-alive without the marker.
            try:
                self._queue.put_nowait(_CLOSE)
            except queue.Full:
                pass

    def __iter__(self):
        # retry: how long the browser waits before it reconnects a dropped view.
        yield b"retry: 2000\n" + sse("hello", {"key": self.key, "live": self._feed.live})
        while not self._closed and not self._feed.closed:
            try:
                message = self._queue.get(timeout=self._keepalive)
            except queue.Empty:
                # Writing is how a closed tab is noticed and its thread freed.
                yield b": keepalive\n\n"
                continue
            if message is _CLOSE:
                return
            yield message


class _Tree:
    """What a stack tree's views were sent: the highest ids and those above
    the window's floor (see the module docstring)."""

    def __init__(self, last_event, last_check):
        self.views = set()
        self.last_event = last_event
        self.last_check = last_check
        self.sent_events = set()
        self.sent_checks = set()


class LiveFeed:
    """Receives notifications and feeds the open views (see the module docstring)."""

    def __init__(self, db, conf, transport_url=None, engine=None):
        self._db = db
        self._conf = conf
        self._transport_url = transport_url
        self._engine = engine
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pending = set()
        self._trees = {}
        self._list_views = set()
        self._roots = collections.OrderedDict()
        self._thread = None
        #: Set by close(): no view opens, those open end.
        self.closed = False
        self._listener = None
        self._transport = None
        self._unsubscribe = None
        #: Where notifications come from: "broker", "engine" or None (no live updates).
        self.live = None

    @property
    def views(self):
        with self._lock:
            return len(self._list_views) + sum(len(t.views) for t in self._trees.values())

    # -- starting and stopping ----------------------------------------------

    def start(self):
        from nestedflow.messaging import transport

        self._thread = threading.Thread(target=self._run, name="dashboard-live", daemon=True)
        self._thread.start()
        transport.register_opts(self._conf)
        section = self._conf[transport.NOTIFICATIONS]
        url = transport.notification_url(self._conf, transport.url(self._conf,
                                                                    self._transport_url))
        if [d for d in section.driver if d != "noop"] and not url.startswith("fake:"):
            self._listen(url, section.topics)
            self.live = "broker"
        elif self._engine is not None:
            # The host's engine is the only sender: hear it in-process.
            self._unsubscribe = self._engine.subscribe(self.notify)
            self.live = "engine"
        else:
            LOG.warning("no notifications to follow ([oslo_messaging_notifications] "
                        "driver is noop): pages show the state when loaded")

    def _listen(self, url, topics):
        import oslo_messaging as messaging

        self._transport = messaging.get_notification_transport(self._conf, url=url)
        # A pool of its own: this dashboard gets every notification, and
        # takes none from other consumers of the topics.
        self._listener = messaging.get_notification_listener(
            self._transport, [messaging.Target(topic=topic) for topic in topics],
            [_Endpoint(self)], executor="threading",
            pool=f"nestedflow-dashboard-{uuid.uuid4().hex}")
        self._listener.start()

    def close(self):
        with self._lock:
            self.closed = True
            views = [*self._list_views, *(v for t in self._trees.values() for v in t.views)]
            self._changed.notify_all()
        for view in views:
            view.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._listener is not None:
            self._listener.stop()
            self._listener.wait()
        if self._transport is not None:
            self._transport.cleanup()
        if self._thread is not None:
            self._thread.join(10)

    # -- views ----------------------------------------------------------------

    def open_tree(self, root_id, keepalive):
        """A view of the tree rooted at ``root_id`` (the caller checked the
        viewer may see it)."""
        view = View(self, root_id, keepalive)
        with self._lock:
            tree = self._trees.get(root_id)
        if tree is None:
            fresh = _Tree(*feeds.last_ids(self._db, root_id))
            with self._lock:
                tree = self._trees.setdefault(root_id, fresh)
        with self._lock:
            if self.closed:
                # A browser reconnecting while the server stops: nothing
                # would ever close it.
                view._closed = True
            else:
                tree.views.add(view)
        return view

    def open_list(self, keepalive, project=None):
        """A view of every stack's state changes (``project``: its stacks only)."""
        view = View(self, None, keepalive, project)
        with self._lock:
            if self.closed:
                view._closed = True  # as in open_tree
            else:
                self._list_views.add(view)
        return view

    def _drop(self, view):
        with self._lock:
            self._list_views.discard(view)
            tree = self._trees.get(view.key)
            if tree is not None:
                tree.views.discard(view)
                if not tree.views:
                    del self._trees[view.key]

    # -- notifications in -----------------------------------------------------

    def notify(self, event_type, payload, context=None):
        """An ``Engine.subscribe`` callback: one notification (Heat's format)."""
        stack_id = payload.get("stack_identity")
        if not stack_id:
            return
        if ".stack." in event_type:
            message = sse("stack", {"id": stack_id, "name": payload.get("stack_name"),
                                    "state": payload.get("state"),
                                    "reason": payload.get("state_reason") or ""})
            with self._lock:
                listing = [v for v in self._list_views
                           if v.project is None or v.project == payload.get("tenant_id")]
            for view in listing:
                view.put(message)
        with self._changed:
            self._pending.add(stack_id)
            self._changed.notify()

    def _run(self):
        while True:
            with self._changed:
                while not self._pending and not self.closed:
                    self._changed.wait()
                if self.closed:
                    return
            time.sleep(BATCH)
            with self._lock:
                pending, self._pending = self._pending, set()
                watched = set(self._trees)
            if not watched:
                continue
            roots = set()
            for stack_id in pending:
                try:
                    roots.add(self._root(stack_id))
                except Exception:
                    LOG.exception("cannot find the tree of stack %s", stack_id)
            for root in roots & watched:
                try:
                    self._send(root)
                except Exception:  # the next notification reads again
                    LOG.exception("cannot read what stack tree %s recorded", root)

    def _root(self, stack_id):
        with self._lock:
            root = self._roots.get(stack_id)
        if root is None:
            root = feeds.root_of(self._db, stack_id)
            if root is not None:
                with self._lock:
                    self._roots[stack_id] = root
                    while len(self._roots) > _ROOTS_CACHED:
                        self._roots.popitem(last=False)
        return root

    def _send(self, root):
        with self._lock:
            tree = self._trees.get(root)
        if tree is None:
            return
        events = [e for e in feeds.events_after(self._db, root, tree.last_event - WINDOW)
                  if e.id not in tree.sent_events]
        checks = [c for c in feeds.checks_after(self._db, root, tree.last_check - WINDOW)
                  if c.id not in tree.sent_checks]
        if not events and not checks:
            return
        for items, sent, attr in ((events, tree.sent_events, "last_event"),
                                  (checks, tree.sent_checks, "last_check")):
            sent.update(item.id for item in items)
            setattr(tree, attr, max([getattr(tree, attr), *(item.id for item in items)]))
            floor = getattr(tree, attr) - WINDOW
            sent.difference_update([i for i in sent if i <= floor])
        message = sse("update", {"events": [reads.event_dict(e) for e in events],
                                 "checks": [reads.check_dict(c) for c in checks],
                                 "now": reads.iso_time(reads.utcnow())})
        with self._lock:
            views = list(tree.views)
        for view in views:
            view.put(message)


class _Endpoint:
    """oslo.messaging notification endpoint: every priority goes to the feed."""

    def __init__(self, feed):
        self._feed = feed

    def _received(self, ctxt, publisher_id, event_type, payload, metadata):
        if isinstance(payload, dict) and event_type.startswith("orchestration."):
            self._feed.notify(event_type, payload, ctxt)

    info = warn = error = _received
