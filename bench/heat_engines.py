"""Heat 27's own engines, legacy and convergence, creating the same flat stack
nestedflow's bench creates, on the same database kind: the ``heat-engines``
rows of ``python -m bench``, or on their own::

    python -m bench.heat_engines [--engines legacy,convergence] [--resources 1000]
                                 [--type OS::Heat::None] [--db sqlite] [--runs 3]

What is measured, per run, in a fresh process of the peer virtualenv's
python (``tools/heat-peer.sh``; nestedflow never imports Heat):

* Heat's ``EngineService`` is started as ``heat-engine`` starts it
  (heat/cmd/engine.py: oslo.service's threading backend, then
  ``EngineService(host, ENGINE_TOPIC).start()``, which starts the
  convergence ``WorkerService`` too), on oslo.messaging's in-process
  ``fake://`` transport as Heat's unit tests use it (heat/tests/common.py
  ``messaging.setup("fake://")``): no RabbitMQ, no network, so the times are
  Heat's engine and database work without broker latency -- a lower bound of
  a real deployment. Convergence's ``check_resource`` casts go through that
  transport to the worker's RPC server and its executor threads:
  ``[DEFAULT] executor_thread_pool_size`` is set to the bench's workers per
  traversal (8 by default; Heat's default is 64), the count nestedflow and
  stock TaskFlow get.
* Convergence on an SQLite file, unpaced (below), fails: resources run
  concurrently and one of them gets "database is locked" on a write
  (seen with 8 and with 64 executor threads, from 10 resources up);
  probably SQLite's refusal, without waiting for its busy timeout, of a
  deferred transaction that read and then writes after another connection
  wrote (nestedflow opens its write transactions IMMEDIATE; not
  confirmed). As shipped, convergence starts one leaf a second, and the
  create completes.
* Convergence's workers parse sync-point keys with ``ast.literal_eval`` in
  every executor thread (heat/engine/sync_point.py ``_str_unpack_tuple``);
  on this CPython (3.11.7) concurrent calls now and then raise
  ``SystemError: AST constructor recursion depth mismatch`` (the error of
  python/cpython#106905 in threaded programs), failing the stack: 2 runs in
  2 of 1,000 on PostgreSQL. The calls are made one at a time (a lock around
  ``ast.literal_eval``), which changes no result.
* ``[DEFAULT] periodic_interval`` is raised from 60 s to an hour: the
  engine's periodic service report (``EngineService.service_manage_report``)
  writes the ``service`` table while the create writes, and on an SQLite
  file one of the two gets "database is locked" -- seen failing a legacy
  create of 1,000 (the stack CREATE_FAILED) in one run of three.
* Heat's tables are made with ``models.BASE.metadata.create_all`` as
  heat/tests/utils.py ``setup_dummy_db`` makes them. An SQLite file is put in
  WAL mode, as nestedflow's migration puts its own (``--journal delete``
  leaves Heat's default); PostgreSQL is the bench's own database.
* No Keystone: ``deferred_auth_method = password`` (a context with a
  password stores user_creds without a trust, heat/engine/stack.py
  ``Stack.store``) and a given ``stack_user_project_id`` (so
  ``EngineService.create_stack`` does not ask Keystone for a stack domain
  project, heat/engine/service.py ``_create_stack_user``).
* Pacing: Heat sleeps on purpose in two places, both switched by
  ``heat.engine.scheduler.ENABLE_SLEEP``: convergence sleeps 1 s after
  casting each leaf's ``check_resource`` (heat/engine/stack.py
  ``_converge_create_or_update``, "Sleep between check_resource calls",
  bug 1566845), so N independent resources take at least N-1 s; legacy's
  ``TaskRunner`` sleeps 1 s between steps of the stack's task
  (heat/engine/scheduler.py ``TaskRunner._sleep``). ``pacing: shipped`` runs
  Heat as it ships; ``pacing: off`` sets ``ENABLE_SLEEP = False`` as Heat's
  own unit tests do (heat/tests/common.py ``HeatTestCase.setUp``), measuring
  the engines' work without their throttle.
* Threads: Heat 27's ``ThreadGroup.add_thread`` (heat/engine/service.py)
  appends every thread it starts to the stack's group and never removes a
  finished one (oslo.service's own removes it, ``thread_done``); legacy's
  ``Stack.dispatch_event`` starts one per event, two per resource, so at
  the group's 1,000 a resource fails with "Maximum number of threads
  reached" and the stack with it -- a flat stack of 1,000 cannot be created
  (convergence's workers load stacks without the thread group, and do not
  hit it). ``threads: pruned`` (the default) drops finished threads from
  the list before each start, as oslo.service does; ``threads: shipped``
  shows the failure.
* A warm-up stack of 5 resources first, as nestedflow's row has; then the
  measured ``EngineService.create_stack`` of N independent resources, from
  the call until Heat persists the stack's final state: for convergence
  ``Stack.mark_complete`` -> ``state_set`` -> ``_persist_state``; for legacy
  the state is deferred while the stack lock is held and written by
  ``persist_state_and_release_lock`` when the create thread ends
  (``Stack.defer_state_persist``). Both methods are wrapped to note the
  moment, which changes nothing they do.
* ``Stack.validate`` (called once, in ``_parse_template_and_validate_stack``)
  is timed on its own and reported apart: ``elapsed_s`` and ``cpu_s`` are the
  create without it, ``validate_s`` and ``validate_cpu_s`` the validation.
  nestedflow's create, which it is compared with, includes its validation.
* CPU is the whole process's (every thread), the SQL statements those of
  every SQLAlchemy engine in it (bench.measure.SqlCounter).
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import uuid

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: bench implementation name -> Heat's ``[DEFAULT] convergence_engine``.
ENGINES = {"heat-legacy": False, "heat-convergence": True}
TITLES = {"heat-legacy": "Heat legacy", "heat-convergence": "Heat convergence"}
RESOURCE_TYPES = ("OS::Heat::None", "OS::Heat::TestResource")
#: The stack domain project the stacks are given, in place of Keystone's.
PROJECT = "bench-project"
PACINGS = ("off", "shipped")
THREADS = ("pruned", "shipped")
WAIT_TIMEOUT = 3600
MISSING = ("Heat's peer virtualenv is not installed: run tools/heat-peer.sh "
           "(or set NESTEDFLOW_HEAT_VENV to one it made)")


# -- the nestedflow side: where Heat's python is -----------------------------

def peer_python(repo_root=REPO_ROOT):
    """The peer virtualenv's python, or None when tools/heat-peer.sh has not
    installed it (``heat-peer.sh path`` installs nothing; it only looks)."""
    try:
        found = subprocess.run([os.path.join(repo_root, "tools", "heat-peer.sh"), "path"],
                               capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if found.returncode != 0 or not found.stdout.strip():
        return None
    python = os.path.join(found.stdout.strip().splitlines()[-1], "bin", "python")
    return python if os.access(python, os.X_OK) else None


def template(n, resource_type="OS::Heat::None"):
    """N independent resources of one type (nestedflow's row creates the same)."""
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": resource_type} for i in range(n)}}


# -- the Heat side: runs in the peer virtualenv's python ---------------------

class _Settled:
    """Final states Heat persisted, by stack id, and the time spent in validate."""

    def __init__(self):
        self.cond = threading.Condition()
        self.states = {}
        self.validate_s = 0.0
        self.validate_cpu_s = 0.0

    def note(self, stack):
        if stack.status != stack.IN_PROGRESS:
            with self.cond:
                self.states[stack.id] = (stack.action, stack.status, stack.status_reason)
                self.cond.notify_all()

    def wait(self, stack_id, action=None, timeout=WAIT_TIMEOUT):
        """The stack's final state; with ``action``, the one that action ended in
        (a delete's, not the create's noted before it)."""
        def settled():
            state = self.states.get(stack_id)
            return state is not None and action in (None, state[0])

        with self.cond:
            if not self.cond.wait_for(settled, timeout):
                raise RuntimeError(f"Heat's stack {stack_id} did not settle in {timeout} s")
            return self.states[stack_id]


def _watch(settled):
    """Wrap the two methods through which Heat persists a stack's final state
    (see the module docstring), and Stack.validate to time it apart."""
    from heat.engine import stack as parser

    def after(original):
        def wrapper(self, *args, **kwargs):
            value = original(self, *args, **kwargs)
            settled.note(self)
            return value
        return wrapper

    def timed(original):
        def wrapper(self, *args, **kwargs):
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(self, *args, **kwargs)
            finally:
                # Called in the request's thread, before any create work starts.
                settled.validate_s += time.perf_counter() - wall
                settled.validate_cpu_s += time.thread_time() - cpu
        return wrapper

    parser.Stack._persist_state = after(parser.Stack._persist_state)
    parser.Stack.persist_state_and_release_lock = after(
        parser.Stack.persist_state_and_release_lock)
    parser.Stack.validate = timed(parser.Stack.validate)


def _prune_finished_threads():
    """Heat's ThreadGroup.add_thread, forgetting the group's finished threads first."""
    from heat.engine import service

    add_thread = service.ThreadGroup.add_thread

    def pruning(self, *args, **kwargs):
        with self._lock:
            self.threads[:] = [thread for thread in self.threads if thread.is_alive()]
        return add_thread(self, *args, **kwargs)

    service.ThreadGroup.add_thread = pruning


def _serialize_literal_eval():
    import ast

    literal_eval, lock = ast.literal_eval, threading.Lock()

    def one_at_a_time(node_or_string):
        with lock:
            return literal_eval(node_or_string)

    ast.literal_eval = one_at_a_time


def _use_wal(url):
    path = url.split("sqlite:///", 1)[1]
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")


class HeatEngine:
    """One Heat EngineService in this process on ``url``."""

    def __init__(self, url, convergence, workers, journal="wal", pacing="off",
                 threads="pruned", admin=False):
        # heat/cmd/engine.py picks the threading backend before importing
        # oslo_service.service (Heat 27 runs on threads, not eventlet).
        from oslo_service import backend

        backend.init_backend(backend.BackendType.THREADING)
        # config: imported for its side effect, registering Heat's options.
        from heat.common import config, messaging  # noqa: F401
        from heat.db import api as db_api
        from heat.db import models
        from oslo_config import cfg

        cfg.CONF(args=[], project="heat", default_config_files=[], default_config_dirs=[])
        cfg.CONF.set_override("connection", url, group="database")
        cfg.CONF.set_override("convergence_engine", convergence)
        cfg.CONF.set_override("deferred_auth_method", "password")
        cfg.CONF.set_override("periodic_interval", 3600)
        # Registered by the first RPC server (oslo_messaging/server.py), and
        # Heat reads it then too (EngineService._configure_db_conn_pool_size).
        import oslo_messaging.server

        cfg.CONF.register_opts(oslo_messaging.server._pool_opts)
        cfg.CONF.set_override("executor_thread_pool_size", workers)
        # The default (1,000) refuses anything larger than the row.
        cfg.CONF.set_override("max_resources_per_stack", -1)
        if url.startswith("sqlite") and journal == "wal":
            _use_wal(url)
        engine = db_api.get_engine()
        models.BASE.metadata.create_all(engine)
        self.db = engine
        messaging.setup("fake://")
        self.settled = _Settled()
        _watch(self.settled)

        from heat.engine import scheduler, service
        from heat.rpc import api as rpc_api

        scheduler.ENABLE_SLEEP = pacing == "shipped"
        if threads == "pruned":
            _prune_finished_threads()
        _serialize_literal_eval()
        self.service = service.EngineService("bench", rpc_api.ENGINE_TOPIC)
        self.service.start()
        self.context = self._context(admin)
        self.identities = {}

    @staticmethod
    def _context(admin):
        # As heat/tests/utils.py dummy_context builds one, with a password:
        # deferred_auth_method=password requires it (service.py
        # _validate_deferred_auth_context). A user's request unless ``admin``:
        # Heat's policy keeps some types (OS::Cinder::VolumeType...) to admins.
        from heat.common import context

        return context.RequestContext.from_dict({
            "tenant_id": "bench_tenant", "tenant": "bench", "username": "bench",
            "user_id": "bench", "password": "bench", "roles": ["admin"] if admin else [],
            "is_admin": admin, "auth_url": "http://keystone.invalid:5000/v3",
            "auth_token": "bench"})

    def create(self, tmpl, files=None, environment=None):
        """EngineService.create_stack until Heat stored the final state; its state.
        ``environment``: Heat's (parameters, parameter_defaults, resource_registry)."""
        stack = self.service.create_stack(
            self.context, f"bench-{uuid.uuid4().hex[:8]}", tmpl, params=environment or {},
            files=files or {}, args={}, stack_user_project_id=PROJECT)
        self.identities[stack["stack_id"]] = stack
        return stack["stack_id"], self.settled.wait(stack["stack_id"])

    def delete(self, stack_id):
        """EngineService.delete_stack until Heat stored the delete's final state."""
        self.service.delete_stack(self.context, self.identities[stack_id])
        return self.settled.wait(stack_id, action="DELETE")

    def tree_counts(self, stack_id):
        """(resources, stacks) of the stack's tree: nested stacks by owner_id."""
        import sqlalchemy as sa

        stacks, level = {stack_id}, {stack_id}
        with self.db.connect() as conn:
            while level:
                level = {row[0] for row in conn.execute(
                    sa.select(sa.column("id")).select_from(sa.table("stack")).where(
                        sa.column("owner_id").in_(sorted(level))))} - stacks
                stacks |= level
            resources = conn.execute(
                sa.select(sa.func.count()).select_from(sa.table("resource")).where(
                    sa.column("stack_id").in_(sorted(stacks)))).scalar()
        return resources, len(stacks)

    def check(self, stack_id, state, action):
        if state[:2] != (action, "COMPLETE"):
            raise RuntimeError(f"Heat's stack ended {state[0]}_{state[1]}: {state[2]}")

    def count_complete(self, stack_id):
        import sqlalchemy as sa

        with self.db.connect() as conn:
            return conn.execute(sa.text(
                "SELECT count(*) FROM resource WHERE stack_id = :id AND action = 'CREATE' "
                "AND status = 'COMPLETE'"), {"id": stack_id}).scalar()

    def drain(self):
        """Let threads still running for settled stacks end (not measured):
        legacy's create thread, convergence's purge after mark_complete."""
        deadline = time.monotonic() + 60
        for group in list(self.service.thread_group_mgr.groups.values()):
            for thread in list(group.threads):
                thread.join(max(0.0, deadline - time.monotonic()))
        time.sleep(0.5)

    def stop(self):
        from heat.common import messaging

        self.service.stop()
        messaging.cleanup()


def run_phases(spec, url, measured, warm_up, phase, admin=False, validate_apart=True):
    """Heat's engine of ``spec``; ``warm_up(heat_engine)``, then the measured
    ``phase(heat_engine)`` (which calls ``measured``). Stack.validate's time is
    reported apart from it (see the module docstring); with ``validate_apart``
    false it stays in ``elapsed_s`` too -- a tree's nested stacks validate in
    threads of their own while other resources are created, so their
    validation is not a slice of the wall time to subtract."""
    from bench import nf

    params = spec["params"]
    try:
        import heat  # noqa: F401
    except ImportError:
        raise nf.NotAvailable(MISSING) from None
    if url.startswith("postgresql"):
        try:
            import psycopg2  # noqa: F401
        except ImportError:
            raise nf.NotAvailable("Heat's peer virtualenv has no psycopg2: run "
                                  "tools/heat-peer.sh to add the database drivers") from None
    heat_engine = HeatEngine(url, ENGINES[spec["impl"]], spec["workers"],
                             params.get("journal", "wal"), params.get("pacing", "off"),
                             params.get("threads", "pruned"), admin=admin)
    try:
        warm_up(heat_engine)
        heat_engine.drain()
        settled = heat_engine.settled
        settled.validate_s = settled.validate_cpu_s = 0.0
        phase(heat_engine)
        result = measured.result
        if validate_apart:
            result.update(total_s=result["elapsed_s"], validate_s=settled.validate_s,
                          validate_cpu_s=settled.validate_cpu_s)
            result["elapsed_s"] -= settled.validate_s
            result["cpu_s"] -= settled.validate_cpu_s
        else:  # for the record, under a name the table does not add on
            result["validate_within_s"] = settled.validate_s
        heat_engine.drain()
    finally:
        heat_engine.stop()


def run(spec, url, measured):
    """The Heat row of bench.worker: warm-up, then the measured create."""
    params = spec["params"]

    def warm_up(heat_engine):
        stack_id, state = heat_engine.create(template(5, params["type"]))
        _check(heat_engine, stack_id, state, 5)

    def phase(heat_engine):
        stack_id, state = measured(heat_engine.create, template(params["n"], params["type"]))
        _check(heat_engine, stack_id, state, params["n"])

    run_phases(spec, url, measured, warm_up, phase)


def _check(heat_engine, stack_id, state, n):
    heat_engine.check(stack_id, state, "CREATE")
    done = heat_engine.count_complete(stack_id)
    if done != n:
        raise RuntimeError(f"Heat's stack is CREATE_COMPLETE with {done} of {n} "
                           "resources CREATE_COMPLETE")


# -- on its own ---------------------------------------------------------------

def parse_args(argv):
    from bench import measure

    parser = argparse.ArgumentParser(prog="python -m bench.heat_engines",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default="legacy,convergence",
                        help="comma-separated: legacy, convergence (default both)")
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--type", default="OS::Heat::None", choices=RESOURCE_TYPES)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("NESTEDFLOW_BENCH_PG_URL",
                                                           measure.DEFAULT_PG_URL))
    parser.add_argument("--journal", choices=("wal", "delete"), default="wal",
                        help="SQLite journal mode of Heat's file (default wal, as "
                        "nestedflow's; delete is Heat's own default)")
    parser.add_argument("--pacing", choices=PACINGS, default="off",
                        help="Heat's deliberate sleeps: off (as its unit tests run it; "
                        "default) or shipped")
    parser.add_argument("--threads", choices=THREADS, default="pruned",
                        help="Heat's stack thread groups: pruned of finished threads "
                        "(default) or shipped (legacy fails at about 500 resources)")
    parser.add_argument("--workers", type=int, default=8,
                        help="convergence's executor threads (default 8, the bench's)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=3600.0)
    args = parser.parse_args(argv)
    args.engines = ["heat-" + name.strip() for name in args.engines.split(",")]
    unknown = [name for name in args.engines if name not in ENGINES]
    if unknown:
        parser.error(f"unknown engine {unknown[0][5:]!r}; known: legacy, convergence")
    args.profile = None  # read by bench.cli.Runner, as the suite's arguments are
    return args


def describe(impl, result):
    """One line of a run's numbers: the create, then validate apart, then CPU."""
    if "na" in result:
        return f"{TITLES[impl]}: n/a ({result['na']})"
    if "error" in result:
        return f"{TITLES[impl]}: ERROR {result['error'][:300]}"
    return (f"{TITLES[impl]}: {result['elapsed_s']:.2f} s "
            f"(+{result['validate_s']:.2f} s validate), "
            f"CPU {result['cpu_s']:.2f} s (+{result['validate_cpu_s']:.2f} s), "
            f"{result['statements']} SQL")


def main(argv=None):
    from bench import cases, cli

    args = parse_args(sys.argv[1:] if argv is None else argv)
    python = peer_python()
    if python is None:
        print(f"skipped: {MISSING}", file=sys.stderr)
        return 0
    runner = cli.Runner(args, log=sys.stderr, pythons=dict.fromkeys(ENGINES, python))
    case = cases.BY_NAME["heat-engines"]
    params = {"n": args.resources, "type": args.type, "journal": args.journal,
              "pacing": args.pacing, "threads": args.threads}
    row = {"case": case.name, "db": args.db, "label": str(args.resources), "params": params}
    times = {impl: [] for impl in args.engines}
    for index in range(1, args.runs + 1):
        for impl in args.engines:  # interleaved: load drifts hit both alike
            result = runner.run(case, row, impl, index)
            print(f"run {index}/{args.runs} {describe(impl, result)}", flush=True)
            if "elapsed_s" in result and "error" not in result:
                times[impl].append(result["elapsed_s"])
    for impl, values in times.items():
        if values:
            median = statistics.median(values)
            print(f"{TITLES[impl]} median of {len(values)}: {median:.2f} s, "
                  f"{args.resources / median:.0f} res/s ({args.type}, {args.db}, "
                  f"pacing {args.pacing}, threads {args.threads})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
