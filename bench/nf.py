"""The nestedflow side of each case, through the public ``nestedflow.Engine``.

Only the compile case reaches inside (the flow factory and TaskFlow's
compile step have no public entry point); it says so in its error if the
internals it needs have moved.
"""

import importlib.metadata
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from bench import shapes

WAIT_TIMEOUT = 3600
#: Conductors tell a parent stack its children finished over oslo.messaging;
#: between processes that needs a real broker (doc/source/conductors.rst).
TRANSPORT_URL = os.environ.get("NESTEDFLOW_BENCH_TRANSPORT_URL",
                               "rabbit://guest:guest@127.0.0.1:5672/")


class NotAvailable(Exception):
    """The feature this case needs is not in the engine yet."""


def configure(limit):
    """Allow stacks (and stack trees) of ``limit`` resources; the default cap is 1,000."""
    from nestedflow.conf import CONF

    CONF.set_override("max_resources_per_stack", max(limit, 1000), group="engine")


def make_engine(url, workers, **kwargs):
    import nestedflow

    return nestedflow.Engine(db_url=url, max_workers=workers, **kwargs)


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def settle(engine, stack, expected):
    stack = engine.wait(stack.id, timeout=WAIT_TIMEOUT)
    status = f"{stack.action}_{stack.status}"
    if status != expected:
        raise RuntimeError(f"stack ended {status}, not {expected}: {stack.status_reason}")
    return stack


def warm_up(engine):
    """Small stacks first: lazy imports, plugin scan and statement caches.

    Two shapes, because since database-only waves a flat stack of
    ``OS::Heat::None`` is one wave and never runs a resource's own task:
    warmed by it alone, the per-task path's statements were compiled in
    the measured phase (a chain of 10: 3-5 ms of its 20-25 ms of CPU).
    """
    for nodes in (shapes.flat(5), shapes.build("chain", 3)):
        stack = engine.create_stack(_name("warmup"), shapes.template(nodes))
        settle(engine, stack, "CREATE_COMPLETE")
    quiesce(engine)


def quiesce(engine):
    """Until the runs of stacks that settled have ended.

    ``Engine.wait`` returns when the stack settles; its run then still
    writes the rest of its journal. Left running, that tail of the
    warm-up (or of the create before a measured delete) would be timed
    as part of the next phase. Reaches inside: the public API has no
    "until idle" short of closing the engine.
    """
    if not engine.runs_in_process:
        return  # conductors run the flows; nothing of them runs here
    join = getattr(getattr(engine, "_dispatcher", None), "join", None)
    if join is None:
        raise RuntimeError("nestedflow.Engine has no _dispatcher.join() any more: "
                           "update bench.nf.quiesce")
    join()


def create(engine, template, files=None, **inputs):
    """Create and wait; ``inputs``: create_stack's environment, parameters..."""
    stack = engine.create_stack(_name("bench"), template, files=files, **inputs)
    return settle(engine, stack, "CREATE_COMPLETE")


def update(engine, stack, template):
    engine.update_stack(stack.id, template)
    return settle(engine, stack, "UPDATE_COMPLETE")


def delete(engine, stack):
    engine.delete_stack(stack.id)
    return settle(engine, stack, "DELETE_COMPLETE")


# -- feature detection -------------------------------------------------------

def resource_types():
    from nestedflow.resources.registry import ResourceRegistry

    return set(ResourceRegistry().names())


def require_nested_stacks(template, files):
    """Template resources (``type: child.yaml``) must validate."""
    from nestedflow import exceptions
    from nestedflow.resources.registry import ResourceRegistry
    from nestedflow.stacks.definition import StackDefinition

    try:
        StackDefinition.load(template, files=files, registry=ResourceRegistry(),
                             stack_id="probe", stack_name="probe")
    except exceptions.StackValidationFailed as error:
        raise NotAvailable(f"nested stacks: {error}") from None


def require_resource_group():
    if "OS::Heat::ResourceGroup" not in resource_types():
        raise NotAvailable("OS::Heat::ResourceGroup is not a registered resource type")


def conductor_command():
    """How to start one conductor daemon with this process's code, or NotAvailable.

    The ``nestedflow-conductor`` console script's entry point is run with
    ``python -c`` from the repository root, so conductors import the same
    nestedflow as the benchmark (a fresh clone need not be installed).
    """
    found = [ep for ep in importlib.metadata.entry_points(group="console_scripts")
             if ep.name == "nestedflow-conductor"]
    for ep in found:
        module, _, func = ep.value.partition(":")
        if _importable(module):
            code = f"import sys; from {module} import {func} as main; sys.exit(main())"
            return [sys.executable, "-c", code]
    if _importable("nestedflow.conductor.__main__"):
        return [sys.executable, "-m", "nestedflow.conductor"]
    raise NotAvailable("no nestedflow-conductor (nestedflow.conductor is not importable)")


def _importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def zookeeper_url(repo_root):
    """Start the project's throw-away ZooKeeper if needed; a fresh root path per run.

    ``NESTEDFLOW_BENCH_JOBBOARD_URL`` names another board instead (with its
    credentials and TLS options: doc/source/security.rst); each run gets a
    fresh root path beside the one it names.
    """
    configured = os.environ.get("NESTEDFLOW_BENCH_JOBBOARD_URL")
    if configured:
        import urllib.parse

        parts = urllib.parse.urlsplit(configured)
        root = (parts.path.rstrip("/") or "/nestedflow-bench") + f"-{uuid.uuid4().hex[:8]}"
        return parts._replace(path=root).geturl()
    script = os.path.join(repo_root, "tools", "zookeeper.sh")
    if not os.path.exists("/usr/share/java/zookeeper.jar"):
        raise NotAvailable("ZooKeeper is not installed (tools/zookeeper.sh install)")
    result = subprocess.run(["bash", script, "start"], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise NotAvailable(f"ZooKeeper did not start: {result.stderr.strip()[-200:]}")
    port = os.environ.get("NESTEDFLOW_ZK_PORT", "2181")
    return f"zookeeper://127.0.0.1:{port}/nestedflow-bench-{uuid.uuid4().hex[:8]}"


class Conductors:
    """``count`` conductor daemons started by this process (and only those stopped)."""

    def __init__(self, count, db_url, jobboard_url, transport_url, workers, cwd):
        self.count = count
        self.db_url = db_url
        self.jobboard_url = jobboard_url
        self.transport_url = transport_url
        self.workers = workers
        self.cwd = cwd
        self.procs = []
        self.peak_rss_mb = 0.0
        self._dir = tempfile.mkdtemp(prefix="nestedflow-bench-conductors-")

    def __enter__(self):
        from nestedflow.conf import CONF

        command = conductor_command()
        # Nested stacks are validated where they run: the conductors need
        # the tree-size limit configure() raised in this process too.
        limit = CONF.engine.max_resources_per_stack
        for i in range(self.count):
            conf = os.path.join(self._dir, f"conductor-{i}.conf")
            with open(conf, "w") as handle:
                handle.write(
                    f"[database]\nconnection = {self.db_url}\n\n"
                    f"[engine]\njobboard_url = {self.jobboard_url}\n"
                    f"transport_url = {self.transport_url}\n"
                    f"max_resources_per_stack = {limit}\n\n"
                    f"[conductor]\nname = bench-conductor-{i}\n"
                    f"resource_action_workers = {self.workers}\n"
                )
            env = dict(os.environ, NESTEDFLOW_DB_URL=self.db_url,
                       NESTEDFLOW_JOBBOARD_URL=self.jobboard_url,
                       NESTEDFLOW_TRANSPORT_URL=self.transport_url)
            log = open(os.path.join(self._dir, f"conductor-{i}.log"), "w")
            self.procs.append(subprocess.Popen([*command, "--config-file", conf], env=env,
                                               cwd=self.cwd, stdout=log,
                                               stderr=subprocess.STDOUT))
            log.close()
        try:
            self._wait_until_registered()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_until_registered(self, timeout=120.0):
        """Until every conductor is on the jobboard: importing and connecting
        take seconds of CPU, which must not fall into the measured phase."""
        from nestedflow.conductor import listing

        wanted = {f"bench-conductor-{i}" for i in range(self.count)}
        deadline = time.monotonic() + timeout
        while True:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(
                    f"{len(dead)} conductor(s) exited at start; logs in {self._dir}")
            seen = {c.get("name") for c in listing.describe(self.jobboard_url)["conductors"]}
            if wanted <= seen:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"conductors not registered after {timeout:.0f} s "
                                   f"({sorted(wanted - seen)}); logs in {self._dir}")
            time.sleep(0.2)

    def __exit__(self, *exc):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                _, _, usage = os.wait4(proc.pid, 0)
                self.peak_rss_mb = max(self.peak_rss_mb, usage.ru_maxrss / 1024.0)
                proc.returncode = 0
            except ChildProcessError:
                pass
            except KeyboardInterrupt:
                proc.kill()
                raise
        if exc and exc[0] is None:
            shutil.rmtree(self._dir, ignore_errors=True)


# -- the compile step --------------------------------------------------------

def compile_stack(engine, template, measured):
    """Store the stack without running it, then time (with ``measured``) the
    flow factory (definition reload + task graph) and TaskFlow's load + compile."""
    import futurist
    import taskflow.engines

    from nestedflow.dispatch import held
    from nestedflow.flows import factories, runner, runtime
    from nestedflow.taskflow import parallel_engine as flow_engine

    hold = held.HeldDispatcher()
    engine._dispatcher = hold
    start = time.perf_counter()
    engine.create_stack(_name("compile"), template)
    validate_store = time.perf_counter() - start
    stack_id, traversal_id, action = hold.held[-1]
    executor = futurist.ThreadPoolExecutor(max_workers=engine.runtime.max_workers)

    def build_and_compile():
        with runtime.installed(engine.runtime, "bench"):
            start = time.perf_counter()
            flow = factories.stack_traversal(stack_id, traversal_id, action)
            built = time.perf_counter()
            book = runner.logbook_for(engine._backend, stack_id)
            # The engine nestedflow runs traversals with (nestedflow.taskflow.parallel_engine).
            tf_engine = taskflow.engines.load(flow, engine=flow_engine.ENGINE,
                                              backend=engine._backend, book=book,
                                              executor=executor)
            tf_engine.compile()
            return {"build_s": built - start, "tf_compile_s": time.perf_counter() - built}

    try:
        phases = measured(build_and_compile)
    finally:
        executor.shutdown(wait=True)
    return {"validate_store_s": validate_store, **phases}
