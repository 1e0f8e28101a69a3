"""The conductor: claims traversal jobs from the jobboard and runs them.

One job is one traversal of one stack (see :mod:`nestedflow.dispatch.
jobboard`). A conductor claims it (an ephemeral ZooKeeper node: it vanishes
with the conductor's session), checks it against the allow-list, counts
the attempt in the job itself, then runs it with
:func:`nestedflow.flows.runner.run_traversal` under a fresh *owner token*
``NAME:RANDOM``. Claiming the traversal with that token in SQL fences
every earlier run; the token's ephemeral node under ``ROOT/runs`` tells
other conductors whether a resource lock held by that run may be taken
over (its conductor died) or not.

What happens to the job when the run ends is decided from SQL, which is
the truth (a job whose flow reverted is finished too):

* the stack settled, was superseded by a newer traversal, or is gone:
  the job is consumed;
* this run was fenced by another run of the same traversal: the job is
  not ours any more and is left alone;
* the stack is still in progress under this run: the conductor was asked
  to stop (SIGTERM, or its session expired) and suspended the flow at a
  safe point, or the run failed unexpectedly. The claim is released for
  another conductor to resume the run from its journal; an unexpected
  failure (or a crash, which never gets here) uses up one of
  ``max_job_attempts`` -- after that the stack is marked FAILED.
"""

import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid

from kazoo import exceptions as k_exc
from kazoo.protocol import states as k_states
from kazoo.recipe import watchers
from taskflow import exceptions as tf_exc
from taskflow.jobs import base as jobs_base

from nestedflow import exceptions, states
from nestedflow.conductor.claimed_run import ClaimedRun
from nestedflow.db import session_gate
from nestedflow.db.owners import OwnerToken
from nestedflow.dispatch import impl_zookeeper as jobboard
from nestedflow.dispatch.slots import SlotGate
from nestedflow.flows import runner
from nestedflow.taskflow.sql_backend import TaskflowBackend

LOG = logging.getLogger(__name__)

#: How often the whole board is re-read even without a watch firing.
REFRESH_INTERVAL = 30.0
#: How often a running job's stack is checked for a cancel (besides notifications).
CANCEL_POLL = 5.0


class Conductor:
    """A conductor daemon's work loop (see the module docstring).

    ``engine`` is a :class:`nestedflow.Engine` built with the same jobboard
    URL: its runtime runs the flows (nested stacks post their jobs through
    it) and its ``engine_id`` -- the conductor's name -- goes into the
    events of every resource action run here.
    """

    def __init__(self, engine, name, job_slots=2, session_timeout=10.0, max_attempts=5,
                 poll_interval=1.0):
        self.engine = engine
        self.name = name
        self.url = jobboard.JobboardURL(engine.jobboard_url)
        self.max_attempts = max_attempts
        self.poll_interval = poll_interval
        self.session_timeout = session_timeout
        self.job_slots = job_slots
        # The claim owner on the board: unique per process, so a conductor
        # restarted under the same name never mistakes an old claim for its own.
        self.who = f"{name}.{uuid.uuid4().hex[:8]}"
        self.slots = SlotGate(job_slots)
        self.rt = engine.runtime.with_parts(slots=self.slots, owner_alive=self._owner_alive)
        self.db = engine.db
        # Held while the ZooKeeper session our claims live in is in doubt.
        self.gate = self.db.gate = session_gate.SessionGate()
        self.backend = TaskflowBackend.for_database(self.db)
        self.client = jobboard.make_client(self.url, session_timeout)
        self.board = jobboard.Board(self.who, self.url, self.client)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._session_lost = threading.Event()
        self._runs = {}
        self._threads = set()
        self._lock = threading.Lock()
        self._registered = False
        #: job uuid -> (monotonic time before which we do not claim it again, delay)
        self._backoff = {}
        self.started_at = time.time()

    # -- ZooKeeper ----------------------------------------------------------

    @property
    def node(self):
        return self.url.path(jobboard.CONDUCTORS, self.name)

    def connect(self, timeout=30.0):
        """Connect to ZooKeeper (retrying until ``timeout``) and register."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.client.start(timeout=min(10.0, max(1.0, deadline - time.monotonic())))
                break
            except Exception as error:
                insecure = jobboard.link_error(self.url, error)
                if insecure is not None:
                    raise insecure from error  # retrying cannot fix a certificate
                if time.monotonic() >= deadline or self._stop.is_set():
                    raise exceptions.NestedflowError(
                        f"cannot reach ZooKeeper at {self.url.hosts}: {error}") from error
                LOG.warning("ZooKeeper at %s not reachable yet (%s); retrying",
                            self.url.hosts, error)
                self._stop.wait(1.0)
        self.client.add_listener(self._on_zk_state)
        self.board.connect()
        self.board.notifier.register(jobs_base.POSTED, self._on_posted)
        # Any change among the jobs -- a post, and also a claim released or
        # lapsed with a dead conductor's session -- is worth a look at once.
        watchers.ChildrenWatch(self.client, self.url.path(jobboard.JOBS),
                               func=self._on_jobs_changed, allow_session_lost=True)
        self.client.ensure_path(self.url.path(jobboard.RUNS))
        self.client.ensure_path(self.url.path(jobboard.CONDUCTORS))
        self._register(wait=self.session_timeout + 2.0)

    def _registration(self):
        return json.dumps({
            "name": self.name,
            "who": self.who,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.started_at,
            "job_slots": self.job_slots,
            "session_timeout": self.session_timeout,
        }).encode()

    def _register(self, wait):
        """Create our ephemeral node; a node left by a previous process of the
        same name vanishes when its session expires, so wait that long."""
        started = time.monotonic()
        deadline = started + wait
        while True:
            try:
                self.client.create(self.node, self._registration(), ephemeral=True)
                self._registered = True
                LOG.info("conductor %s registered at %s (claims as %s)", self.name,
                         self.url, self.who)
                return
            except k_exc.NodeExistsError:
                try:
                    data, _ = self.client.get(self.node)
                    other = json.loads(data)
                except (k_exc.NoNodeError, ValueError):
                    continue
                if other.get("who") == self.who:
                    self._registered = True
                    return
                # The previous holder's session may be longer than ours.
                deadline = max(deadline, started + float(other.get("session_timeout") or 0) + 2)
                if time.monotonic() >= deadline:
                    raise exceptions.ConductorNameTaken(
                        f"a conductor named {self.name} is already running on "
                        f"{other.get('host')} (pid {other.get('pid')}); give this one "
                        "another name (--name or [conductor] name)") from None
                LOG.info("waiting for the previous conductor named %s (%s pid %s) to "
                         "expire", self.name, other.get("host"), other.get("pid"))
                time.sleep(0.5)

    def _on_zk_state(self, state):
        # Runs on kazoo's thread: only flag it (and set the gate, which
        # only flips a state; the held calls wait on their own threads).
        if state == k_states.KazooState.SUSPENDED:
            self.gate.suspend()
        elif state == k_states.KazooState.LOST:
            self.gate.lose()
            self._session_lost.set()
            self._wake.set()
        elif state == k_states.KazooState.CONNECTED:
            self.gate.resume()
            self._wake.set()

    def _on_posted(self, state, details):
        self._wake.set()

    def _on_jobs_changed(self, children):
        self._wake.set()

    def _owner_alive(self, owner):
        """Runtime.owner_alive: conductor runs are alive while their node is."""
        if not OwnerToken(owner).is_conductor_run:
            return None  # not a conductor's token (an embedded engine's run)
        try:
            return self.client.exists(self.url.path(jobboard.RUNS, owner)) is not None
        except Exception:
            # No answer from ZooKeeper: do not guess; the lock's age decides.
            return None

    # -- the loop -----------------------------------------------------------

    def run(self):
        """Claim and run jobs until :meth:`stop`; returns when no longer claiming."""
        last_refresh = time.monotonic()
        while not self._stop.is_set():
            if self._session_lost.is_set():
                self._recover_session()
                continue
            fresh = time.monotonic() - last_refresh > REFRESH_INTERVAL
            if fresh:
                last_refresh = time.monotonic()
            self._wake.clear()
            claimed = self._claim_jobs(fresh)
            if not claimed:
                self._wake.wait(self.poll_interval)

    def _claim_jobs(self, ensure_fresh):
        # The board is read lazily, one job per free slot: asking whether a
        # job is claimed is a ZooKeeper round trip, and a busy conductor
        # must not ask it of every job on the board at each wake-up.
        claimed = 0
        now = time.monotonic()
        try:
            jobs = self.board.unclaimed_jobs(ensure_fresh=ensure_fresh)
        except tf_exc.JobFailure as error:
            LOG.warning("cannot read the jobboard: %s", jobboard.describe(error))
            return 0
        while not (self._stop.is_set() or self._session_lost.is_set()):
            if not self.slots.try_reserve():
                break
            try:
                job = next(jobs, None)
            except tf_exc.JobFailure as error:
                self.slots.release_reserved()
                LOG.warning("cannot read the jobboard: %s", jobboard.describe(error))
                break
            if job is None:
                self.slots.release_reserved()
                break
            if self._backoff.get(job.uuid, (0, 0))[0] > now:
                self.slots.release_reserved()
                continue
            try:
                self.board.claim(job, self.who)
            except (tf_exc.UnclaimableJob, tf_exc.NotFound):
                self.slots.release_reserved()
                continue
            except tf_exc.JobFailure as error:
                self.slots.release_reserved()
                LOG.warning("claiming job %s failed: %s", job.uuid, error)
                break
            claimed += 1
            thread = threading.Thread(target=self._job_thread, args=(job,),
                                      name=f"job-{job.uuid[:8]}", daemon=True)
            with self._lock:
                self._threads.add(thread)
            thread.start()
        return claimed

    def _job_thread(self, job):
        try:
            self._work(job)
        except Exception as exc:
            # Never keep a claim we cannot use: hand it back (later).
            LOG.exception("job %s: unexpected error; handing it back", job.uuid)
            self._abandon(job, refund=jobboard.transient(exc), error=jobboard.describe(exc))
        finally:
            self.slots.release_reserved()
            with self._lock:
                self._threads.discard(threading.current_thread())
            self._wake.set()

    # -- one job ------------------------------------------------------------

    def _work(self, job):
        data, _ = jobboard.read_job(self.client, job.path)
        if data is None:
            return
        details = data.get("details")
        reason = jobboard.refusal(details, self.db)
        if reason is not None:
            self._refuse(job, data, reason)
            return
        kwargs = details["kwargs"]
        stack_id, traversal_id, action = (kwargs["stack_id"], kwargs["traversal_id"],
                                          kwargs["action"])
        attempt = self._count_attempt(job)
        LOG.info("job %s: %s stack %s traversal %s (attempt %d)", job.uuid, action, stack_id,
                 traversal_id, attempt)
        done = self._nothing_to_do(stack_id, traversal_id)
        if done:
            self._finish(job, done)
            return
        if attempt > self.max_attempts:
            self._give_up(job, details, stack_id, traversal_id, attempt - 1)
            return
        owner = OwnerToken.conductor(self.name)
        run = ClaimedRun(job, owner, stack_id, traversal_id, action)
        run_node = self.url.path(jobboard.RUNS, owner)
        # Before the SQL claim: from the moment the token is the stack's owner,
        # other conductors must see this run as alive.
        self.client.create(run_node, json.dumps({
            "conductor": self.name, "job": job.uuid, "stack_id": stack_id,
            "traversal_id": traversal_id, "action": action}).encode(), ephemeral=True)
        with self._lock:
            self._runs[job.uuid] = run
        watcher = threading.Thread(target=self._watch_cancel, args=(run,),
                                   name=f"cancel-{job.uuid[:8]}", daemon=True)
        watcher.start()
        error = None
        try:
            runner.run_traversal(self.rt, self.backend, stack_id, traversal_id, action,
                                 owner=owner, resume=True, on_engine=run.attach)
        except Exception as exc:
            error = exc
            LOG.warning("job %s: run %s of stack %s failed: %s", job.uuid, owner, stack_id,
                        exc, exc_info=not isinstance(exc, exceptions.NestedflowError))
        finally:
            with run.lock:
                run.done.set()
                # A stop the watcher set after the run ended must not cut a
                # later run of this traversal short.
                self.rt.forget(traversal_id)
            with self._lock:
                self._runs.pop(job.uuid, None)
            with contextlib.suppress(Exception):
                self.client.delete(run_node)
        self._after_run(job, run, error)

    def _watch_cancel(self, run):
        """Cut the run's waits short when the user cancels it with rollback, as
        ``Engine.cancel_update`` does for the traversals of its own process.
        Woken by the stack's change notification; the database is read every
        few seconds in case the notification is lost (or on fake://)."""

        def cancelled():
            if run.done.is_set():
                return True
            try:
                current, _, cancel, _ = self.db.ownership(run.stack_id)
            except exceptions.StackNotFound:
                return True
            return current == run.traversal_id and cancel == states.CANCEL_ROLLBACK

        while not run.done.is_set():
            try:
                hit = self.rt.events.wait(run.stack_id, cancelled, timeout=CANCEL_POLL)
            except Exception as error:
                LOG.debug("cancel watch of stack %s: %s", run.stack_id, error)
                hit = run.done.wait(CANCEL_POLL) and False
            if hit:
                with run.lock:
                    if not run.done.is_set():
                        LOG.info("stack %s: cancel requested; stopping the waits of run %s",
                                 run.stack_id, run.owner)
                        self.rt.stop_event(run.traversal_id).set()
                return

    def _nothing_to_do(self, stack_id, traversal_id):
        """Why the job is finished already (None if it must run)."""
        try:
            stack = self.db.get_stack(stack_id)
        except exceptions.StackNotFound:
            return f"stack {stack_id} no longer exists"
        if stack.current_traversal != traversal_id:
            return (f"traversal {traversal_id} was superseded by "
                    f"{stack.current_traversal}")
        if stack.status != states.IN_PROGRESS:
            return f"stack already {stack.action}_{stack.status}"
        return None

    def _after_run(self, job, run, error):
        try:
            current, owner, _, _ = self.db.ownership(run.stack_id)
            stack = self.db.get_stack(run.stack_id)
        except exceptions.StackNotFound:
            self._finish(job, f"stack {run.stack_id} no longer exists")
            return
        except Exception as exc:
            LOG.warning("job %s: cannot read stack %s (%s); handing the job back",
                        job.uuid, run.stack_id, exc)
            self._abandon(job, refund=jobboard.transient(exc), error=str(exc))
            return
        if current != run.traversal_id:
            self._finish(job, f"traversal superseded by {current}")
        elif owner != run.owner:
            # The one line a fenced run logs (its TaskFlow failures are
            # filtered: flows.log_filters).
            LOG.warning("stack %s traversal %s: run %s was fenced off; run %s owns it now "
                        "(job %s), leaving it to that run", run.stack_id, run.traversal_id,
                        run.owner, owner, job.uuid)
        elif stack.status != states.IN_PROGRESS:
            self._finish(job, f"stack {stack.action}_{stack.status}")
        elif run.suspend_requested and error is None:
            LOG.info("job %s: suspended stack %s at a safe point; handing it back",
                     job.uuid, run.stack_id)
            self._abandon(job, refund=True)
        else:
            reason = (f"{type(error).__name__}: {error}" if error is not None
                      else "the flow ended with the stack unsettled")
            LOG.warning("job %s: stack %s still %s_IN_PROGRESS (%s); handing it back",
                        job.uuid, run.stack_id, stack.action, reason)
            self._abandon(job, refund=error is not None and jobboard.transient(error), error=reason)

    # -- job bookkeeping ----------------------------------------------------

    def _update_details(self, job, change):
        """Apply ``change(details)`` to the job node (we hold its claim)."""
        for _ in range(5):
            data, stat = jobboard.read_job(self.client, job.path)
            if data is None:
                return None
            details = data.setdefault("details", {})
            change(details)
            try:
                self.client.set(job.path, json.dumps(data).encode(), version=stat.version)
                return details
            except k_exc.BadVersionError:
                continue
        raise exceptions.NestedflowError(f"job {job.uuid} keeps changing")

    def _count_attempt(self, job):
        def bump(details):
            details["attempts"] = int(details.get("attempts") or 0) + 1
            details["last_conductor"] = self.name

        details = self._update_details(job, bump)
        return details["attempts"] if details else 1

    def _refuse(self, job, data, reason):
        LOG.error("job %s (%s) refused and removed from the jobboard: %s; "
                  "nothing of it was imported or run", job.uuid, data.get("name"), reason)
        with contextlib.suppress(Exception):
            self._update_details(job, lambda d: d.update(
                refused=reason, refused_by=self.name, refused_at=time.time()))
        try:
            self.board.trash(job, self.who)
        except (tf_exc.JobFailure, tf_exc.NotFound) as error:
            LOG.warning("job %s: could not move it to the trash: %s", job.uuid, error)

    def _finish(self, job, why):
        LOG.info("job %s finished: %s", job.uuid, why)
        self._backoff.pop(job.uuid, None)
        try:
            self.board.consume(job, self.who)
        except (tf_exc.JobFailure, tf_exc.NotFound) as error:
            LOG.warning("job %s: could not remove it from the jobboard: %s", job.uuid, error)

    def _abandon(self, job, refund, error=None):
        """Release the claim. With an ``error`` this conductor waits a while
        (doubling up to a minute) before claiming the same job again."""
        if error:
            _, delay = self._backoff.get(job.uuid, (0, 0.5))
            delay = min(60.0, delay * 2)
            self._backoff[job.uuid] = (time.monotonic() + delay, delay)

        def record(details):
            if refund:
                details["attempts"] = max(0, int(details.get("attempts") or 0) - 1)
            if error:
                details["last_error"] = error[:2000]

        with contextlib.suppress(Exception):
            self._update_details(job, record)
        try:
            self.board.abandon(job, self.who)
        except (tf_exc.JobFailure, tf_exc.NotFound) as exc:
            LOG.warning("job %s: could not release the claim: %s", job.uuid, exc)

    def _give_up(self, job, details, stack_id, traversal_id, attempts):
        last = details.get("last_error")
        stack = self.db.get_stack(stack_id)
        reason = (f"Stack {stack.action} failed: gave up after {attempts} attempts to run "
                  "it" + (f"; last error: {last}" if last else " (the conductors running it "
                          "died)"))
        LOG.error("job %s: %s", job.uuid, reason)
        owner = OwnerToken.conductor(self.name)
        try:
            self.db.claim_traversal(stack_id, traversal_id, owner)
            self.db.set_stack_state(stack_id, traversal_id, stack.action, states.FAILED, reason,
                                    owner=owner)
        except exceptions.OwnershipLost:
            pass
        self._finish(job, reason)

    # -- stopping -----------------------------------------------------------

    def _recover_session(self):
        """Our session expired: every claim is gone, so stop what we run (at a
        safe point) and register again once reconnected."""
        self._session_lost.clear()
        self._registered = False
        runs = self.running()
        LOG.warning("ZooKeeper session expired: suspending %d run(s) whose claims are gone",
                    len(runs))
        self._release_held(runs)
        while not self._stop.is_set():
            if self.client.state == k_states.KazooState.CONNECTED:
                try:
                    self._register(wait=self.session_timeout + 2.0)
                    return
                except exceptions.ConductorNameTaken:
                    raise
                except Exception as error:
                    LOG.warning("registering again failed: %s", error)
            self._wake.wait(0.5)
            self._wake.clear()

    def _release_held(self, runs):
        """Suspend ``runs``, whose claims lapsed or may have, fence each off
        in the database, then fail their calls held at the gate: whatever
        they still try is refused as a fenced run's write is."""
        for run in runs:
            run.suspend()
        with self.gate.passing():
            for run in runs:
                try:
                    self.db.fence_run(run.stack_id, run.traversal_id, run.owner,
                                      OwnerToken.lapsed(run.owner))
                except Exception as error:
                    LOG.warning("run %s: could not fence it off: %s", run.owner, error)
        self.gate.renew()

    def running(self):
        with self._lock:
            return list(self._runs.values())

    def stop(self):
        """Stop claiming; :meth:`shutdown` then hands running jobs back."""
        self._stop.set()
        self._wake.set()

    def shutdown(self, timeout=None):
        """Suspend running flows at a safe point and release their claims.

        Returns False if some were still running after ``timeout`` seconds.
        """
        self.stop()
        runs = self.running()
        if runs:
            LOG.info("stopping: suspending %d running job(s)", len(runs))
        if self.gate.state == session_gate.OPEN:
            for run in runs:
                run.suspend()
        else:
            # A run held at the gate by a session in doubt must not hold up the stop.
            self._release_held(runs)
        deadline = None if not timeout else time.monotonic() + timeout
        while True:
            with self._lock:
                threads = list(self._threads)
            if not threads:
                return True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                LOG.warning("stopping: %d job(s) did not reach a safe point within %ss",
                            len(threads), timeout)
                return False
            threads[0].join(remaining)

    def close(self):
        """Leave ZooKeeper (our claims and registration go at once) and the DB."""
        with contextlib.suppress(Exception):
            # A session we end ourselves is not a lost connection to warn
            # about, nor one to hold the database calls of our shutdown for.
            self.client.remove_listener(self._on_zk_state)
            self.client.remove_listener(self.board.state_change_listener)
            self.board.close()
        with contextlib.suppress(Exception):
            self.client.stop()
            self.client.close()
        # No claim of ours is left to guard; nothing may wait at the gate now.
        self.db.gate = None
        self.gate.renew()
        self.backend.close()
        self.engine.close()
