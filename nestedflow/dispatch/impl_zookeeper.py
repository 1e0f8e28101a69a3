"""Distributed dispatch: every traversal becomes a job on a ZooKeeper jobboard.

``zookeeper://HOST:PORT[,HOST:PORT...]/ROOT`` names one deployment. Under
its root path::

    ROOT/jobs/job0000000042          a posted traversal (TaskFlow job)
    ROOT/jobs/job0000000042.lock     its claim (ephemeral, owned by a conductor)
    ROOT/.trash/job0000000042        a refused job, with the reason
    ROOT/conductors/NAME             a live conductor (ephemeral)
    ROOT/runs/OWNER                  a live run of a claimed job (ephemeral)

TaskFlow's board derives its trash path by replacing the last path
component, so boards under sibling paths would share one trash folder;
:class:`Board` pins every folder under the deployment's own root instead.

A job carries no secrets and no code: the name of a flow factory from
:data:`nestedflow.flows.factories.ALLOWED`, its JSON arguments, and the
uuid of the flow detail (in the stack's logbook) that records them in
TaskFlow's own format. The database URL and plugins come from the
conductor's configuration.
"""

import contextlib
import logging
import threading
import time
import uuid

from kazoo import exceptions as k_exceptions
from kazoo.protocol import paths as k_paths
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc
from taskflow import exceptions as tf_exceptions
from taskflow.persistence import models as tf_models

from nestedflow import exceptions, states
from nestedflow.db import models, retrying
from nestedflow.db.owners import OwnerToken
from nestedflow.dispatch import base, job_schema, zk_security
from nestedflow.dispatch.zookeeper import (  # noqa: F401 (re-exported, see below)
    CONDUCTORS,
    DEFAULT_ROOT,
    JOBS,
    RUNS,
    SCHEME,
    TRASH,
    JobboardURL,
    describe,
    link_error,
    make_client,
    read_job,
)
from nestedflow.flows import factories, journal, runner
from nestedflow.taskflow.jobboard import ZookeeperBoard

# The ZooKeeper layout (URL, paths, client) lives in dispatch.zookeeper so
# that listing the board (``nestedflow conductor list``) imports neither
# TaskFlow nor the engine; it is re-exported here for the rest of the board.

LOG = logging.getLogger(__name__)


class _ClosingBoards(logging.Filter):
    """Drops TaskFlow's warnings about a job's data fetch cut short by a
    session this process is ending itself.

    Posting a job fires the board's own children watch, whose data fetch
    may still be in flight when a command closes the board; kazoo then
    fails it with ConnectionLoss and TaskFlow warns "Internal error
    fetching job data" (``ZookeeperJobBoard._process_child``) -- a
    warning on a command that worked (seen on one command in four).
    """

    def __init__(self):
        super().__init__()
        self._paths = set()

    @contextlib.contextmanager
    def closing(self, path):
        prefix = path.rstrip("/") + "/"
        self._paths.add(prefix)
        try:
            yield
        finally:
            self._paths.discard(prefix)

    def filter(self, record):
        args = record.args if isinstance(record.args, tuple) else ()
        return not (record.levelno == logging.WARNING and args and isinstance(args[0], str)
                    and any(args[0].startswith(path) for path in self._paths))


_CLOSING = _ClosingBoards()
logging.getLogger("taskflow.jobs.backends.impl_zookeeper").addFilter(_CLOSING)


class Board(ZookeeperBoard):
    """TaskFlow's ZooKeeper board with every folder under the deployment root."""

    def __init__(self, name, url, client, persistence=None, emit_notifications=True):
        # TaskFlow's version check asks the server with a four-letter word,
        # which kazoo cannot send over TLS; a secureClientPort means 3.5+.
        super().__init__(name, {"path": url.path(JOBS),
                                "check_compatible": not url.options.use_ssl},
                         client=client, persistence=persistence,
                         emit_notifications=emit_notifications)
        self.relocate(url.path(TRASH), url.path(".entities"))
        self._url = url

    def connect(self, timeout=10.0):
        super().connect(timeout=timeout)
        # Once per process joining the board with credentials: a root left
        # open (by an older version) lets anyone who reaches ZooKeeper write
        # the board whatever this URL says. Without credentials the
        # deployment chose an open board; `conductor list` says so.
        if self._url.options.authenticated:
            warning = zk_security.root_report(self.client, self._url)
            if warning:
                LOG.warning("%s", warning)

    def unclaimed_jobs(self, ensure_fresh=False):
        """The jobs not claimed as of one listing of the board, oldest first.

        TaskFlow's ``iterjobs(only_unclaimed=True)`` asks ZooKeeper three
        questions per job to learn its state, claimed ones included: with
        four conductors sharing fifty jobs, each claim walked past dozens
        of claimed jobs, tenths of a second while a slot stood idle. A
        claim is a lock node beside its job node, so one listing tells them
        all; a job claimed since then fails its claim, as before.
        """
        jobs = self.fetch_jobs(ensure_fresh=ensure_fresh)
        if not jobs:
            return
        try:
            names = set(self.client.get_children(self.path))
        except k_exceptions.NoNodeError:
            return
        except k_exceptions.KazooException as error:
            raise tf_exceptions.JobFailure(
                f"cannot list the jobboard: {describe(error)}") from error
        for job in jobs:
            name = k_paths.basename(job.path)
            if name in names and name + self.LOCK_POSTFIX not in names:
                yield job


def job_details(stack_id, traversal_id, action, flow_uuid, posted_by):
    return {
        "factory": factories.TRAVERSAL,
        "kwargs": {"stack_id": stack_id, "traversal_id": traversal_id, "action": action},
        "flow_uuid": flow_uuid,
        "posted_by": posted_by,
        "posted_at": time.time(),
        "attempts": 0,
    }


def refusal(details, db=None):
    """Why a conductor must not run a job with ``details`` (None: it may):
    the job schema (:mod:`nestedflow.dispatch.job_schema`), then, given the
    database, the stack and traversal it names."""
    reason = job_schema.schema_refusal(details)
    if reason is None and db is not None:
        reason = job_schema.stack_refusal(db, details["kwargs"])
    return reason


#: Errors saying the infrastructure is down, not that a job is bad.
TRANSIENT = (db_exc.DBConnectionError, k_exceptions.ConnectionLoss,
             k_exceptions.SessionExpiredError, tf_exceptions.JobFailure,
             sa_exc.OperationalError)


def transient(error):
    """Whether ``error`` (or what it was raised from) says the infrastructure
    is down: such failures do not use up a job's attempts. SQLAlchemy's own
    count, where oslo.db's filters do not translate them: a PostgreSQL
    server restarting for a few seconds used up every attempt of the jobs
    in flight (tests/functional/test_partitions.py)."""
    for _ in range(8):
        if isinstance(error, TRANSIENT) or getattr(error, "connection_invalidated", False):
            return True
        error = error and (error.__cause__ or error.__context__)
    return False


def post_flow_detail(backend, stack_id, traversal_id, action):
    """Record the traversal in the stack's logbook the way TaskFlow records a
    factory-built flow; each run resumes from the latest detail of it."""
    kwargs = {"stack_id": stack_id, "traversal_id": traversal_id, "action": action}
    detail = tf_models.FlowDetail(f"{action.lower()} {stack_id}", uuid=str(uuid.uuid4()))
    detail.meta = runner.flow_meta(factories.TRAVERSAL, kwargs, run=0, owner=None)
    book = runner.logbook_for(backend, stack_id)
    book.add(detail)
    with contextlib.closing(backend.get_connection()) as conn:
        conn.save_logbook(book)
    return detail


class JobboardDispatcher(base.Dispatcher):
    """Posts each traversal as a job; conductors run it."""

    runs_in_process = False

    def __init__(self, url, db, backend, poster, connect_timeout=10.0):
        self.url = JobboardURL(url)
        self._db = db
        self._backend = backend
        self._poster = poster
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._client = None
        self._board = None
        self._closed = False

    @classmethod
    def from_url(cls, url, *, runtime, backend):
        return cls(url, runtime.db, backend, poster=runtime.engine_id)

    def _connected_board(self):
        with self._lock:
            if self._closed:
                raise exceptions.NestedflowError("engine is closed")
            if self._board is None:
                client = make_client(self.url)
                board = Board(f"poster-{self._poster}", self.url, client,
                              emit_notifications=False)
                try:
                    board.connect(timeout=self._connect_timeout)
                except Exception as error:
                    with contextlib.suppress(Exception):
                        client.stop()
                        client.close()
                    insecure = link_error(self.url, error)
                    if insecure is not None:
                        raise insecure from error
                    raise
                self._client, self._board = client, board
            return self._board

    def dispatch(self, stack_id, traversal_id, action):
        try:
            board = self._connected_board()
            detail = retrying.on_disconnect(post_flow_detail)(self._backend, stack_id,
                                                              traversal_id, action)
            details = job_details(stack_id, traversal_id, action, detail.uuid, self._poster)
            book = tf_models.LogBook(journal.book_name(stack_id), uuid=stack_id)
            try:
                job = board.post(f"{action.lower()} {stack_id}", book=book, details=details)
            except Exception as error:
                if not transient(error):
                    raise
                # The board's session expired (an ensemble without quorum for
                # longer than it, say) and its client may not have a new one
                # yet: post once more on a new connection.
                LOG.warning("stack %s: posting failed (%s); reconnecting", stack_id, error)
                self._drop_board()
                job = self._connected_board().post(f"{action.lower()} {stack_id}", book=book,
                                                   details=details)
        except exceptions.OwnershipLost:
            raise  # the run posting it lost its claim: not its child to fail
        except Exception as error:
            reason = f"Stack {action} could not be posted to {self.url}: {error}"
            if self._leave_to_outbox(stack_id, traversal_id, reason):
                return
            # Nobody would ever run this traversal: say so on the stack
            # rather than leave it IN_PROGRESS for ever.
            LOG.error("stack %s: %s", stack_id, reason)
            values = {}
            if action in (states.CREATE, states.ADOPT):
                # Nothing ran and nothing will: the stack goes (its name is
                # free for a retry), and the caller gets the error.
                values["deleted_at"] = models.utcnow()
            with contextlib.suppress(exceptions.NestedflowError):
                self._db.set_stack_state(stack_id, traversal_id, action, states.FAILED, reason,
                                         **values)
            raise exceptions.NestedflowError(reason) from error
        LOG.info("stack %s: posted %s traversal %s as job %s", stack_id, action,
                 traversal_id, job.uuid)

    def _leave_to_outbox(self, stack_id, traversal_id, reason):
        """A nested stack's job is posted by a run of its parent, on a
        conductor that may just have been cut off from ZooKeeper -- and so
        have lost the parent's claim to a run on another conductor, which
        waits for this child (a re-run finds the child it made and does not
        post it again). Failing the child would fail that run, and would be
        a write by a run that no longer owns its work. So the child stays
        IN_PROGRESS and its outbox mark is handed, by compare-and-swap on
        this engine's own mark, to an engine that does not beat: any live
        engine with a jobboard posts it at its next beat (:meth:`repost`).
        Returns False for a top-level stack, whose poster is told instead.
        """
        mark = getattr(self._db, "queued_owner", None)
        try:
            if mark is None or not self._db.get_stack(stack_id).parent_id:
                return False
            orphan = OwnerToken.orphaned(OwnerToken(mark).engine_id)
            handed = self._db.take_over_unposted(stack_id, traversal_id, mark, orphan)
        except exceptions.OwnershipLost:
            # Held while this conductor's ZooKeeper session was in doubt, and
            # it lapsed (db.session_gate): the child is left as it is, for
            # the run that takes the parent over.
            raise
        except Exception as error:
            LOG.warning("stack %s: could not leave its job to the outbox: %s", stack_id, error)
            return False
        LOG.warning("stack %s: %s; %s", stack_id, reason,
                    "left to the outbox (a live engine posts it)" if handed
                    else "its traversal is no longer this engine's to post")
        return True

    def repost(self, owner):
        """Post the jobs of the traversals dead engines stored and perhaps
        never posted (the outbox: ``Database.unposted_stacks``), taking
        each over as ``owner`` first so that one engine posts it; a job of
        the traversal already on the board (the engine died after posting
        it) is left alone. Returns the ids of the stacks posted again."""
        reposted = []
        posted = None  # the board's traversals, read once per pass if needed
        for stack_id, traversal_id, action, dead in self._db.unposted_stacks():
            if not self._db.take_over_unposted(stack_id, traversal_id, dead, owner):
                continue
            if posted is None:
                posted = self._posted_traversals()
            if traversal_id in posted:
                continue
            LOG.warning("stack %s traversal %s: stored by %s, which died or failed to "
                        "post it, and never claimed; posting it again", stack_id, traversal_id,
                        OwnerToken(dead).engine_id)
            self.dispatch(stack_id, traversal_id, action)
            reposted.append(stack_id)
        return reposted

    def unserved(self):
        """No conductor is registered on the board (each keeps an ephemeral
        node there while its ZooKeeper session lives)."""
        try:
            self._connected_board()  # connects the client
            names = self._client.get_children(self.url.path(CONDUCTORS))
        except k_exceptions.NoNodeError:
            names = []  # no conductor ever started on this board
        except Exception as error:  # any failure is the answer
            return f"cannot read the conductors registered at {self.url}: {error}"
        if names:
            return None
        return f"no live conductor is registered at {self.url}"

    def _posted_traversals(self):
        jobs = self._connected_board().fetch_jobs(ensure_fresh=True)
        return {(job.details or {}).get("kwargs", {}).get("traversal_id") for job in jobs}

    def add_done_callback(self, callback):
        """Traversals end in conductors; Engine.wait polls the database."""

    def _drop_board(self):
        with self._lock:
            board, client = self._board, self._client
            self._board = self._client = None
        with contextlib.suppress(Exception):
            board.close()
        with contextlib.suppress(Exception):
            client.stop()
            client.close()

    def close(self):
        with self._lock:
            self._closed = True
            board, client = self._board, self._client
            self._board = self._client = None
        with (_CLOSING.closing(board.path) if board is not None
              else contextlib.nullcontext()):
            if board is not None:
                if client is not None:
                    # A session we end ourselves is not a lost connection:
                    # without this every jobboard command ended with
                    # TaskFlow's warning.
                    with contextlib.suppress(Exception):
                        client.remove_listener(board.state_change_listener)
                board.close()
            if client is not None:
                # stop() returns once kazoo's callback threads have run what
                # it failed, the fetch's warning included.
                with contextlib.suppress(Exception):
                    client.stop()
                    client.close()
