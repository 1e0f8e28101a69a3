"""One run of one case in a fresh process: ``python -m bench.worker SPEC.json OUT.json``.

A fresh process per run makes peak RSS (``ru_maxrss``) belong to that run
alone, and keeps import and cache state from leaking between cases.
"""

import contextlib
import json
import logging
import os
import resource
import sys
import time
import traceback
import warnings

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _quiet():
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.WARNING)
    for name in ("nestedflow", "taskflow", "stevedore", "alembic", "oslo_db", "heat"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Measured:
    """Times one phase; counts its SQL; optionally profiles it (all threads)."""

    def __init__(self, counter, profile_path=None):
        self.counter = counter
        self.profile_path = profile_path
        self.result = {}

    def __call__(self, fn, *args, **kwargs):
        from bench import measure

        profiler = measure.ThreadedProfile() if self.profile_path else contextlib.nullcontext()
        self.counter.reset()
        cpu = _cpu_seconds()
        start = time.perf_counter()
        with profiler:
            value = fn(*args, **kwargs)
        elapsed = time.perf_counter() - start
        # CPU of this process (all threads): what the Python side costs, as
        # opposed to time spent waiting on the database, locks or sleeps.
        # The 1-minute load average at the end: other work on the machine
        # (test suites...) shows up here and makes the times suspect.
        self.result.update(self.counter.snapshot(), elapsed_s=elapsed,
                           cpu_s=_cpu_seconds() - cpu, loadavg=os.getloadavg()[0])
        if self.profile_path:
            profiler.dump(self.profile_path)
            self.result["profile"] = self.profile_path
        return value


def run_stack(spec, url, measured):
    """create (or delete) of a stack of the case's shape."""
    from bench import nf, shapes, stock

    params = spec["params"]
    nodes = shapes.build(params["shape"], params["n"])
    workers = spec["workers"]
    if spec["impl"] == "stock":
        stock.run_measured(nodes, url, workers, measured)
        return
    nf.configure(len(nodes))
    engine = nf.make_engine(url, workers)
    try:
        nf.warm_up(engine)
        template = shapes.template(nodes, params.get("type", "OS::Heat::None"))
        if params.get("phase") == "delete":
            stack = nf.create(engine, template)
            nf.quiesce(engine)
            measured(nf.delete, engine, stack)
        else:
            measured(nf.create, engine, template)
    finally:
        engine.close()


def run_compile(spec, url, measured):
    from bench import nf, shapes, stock

    nodes = shapes.build(spec["params"]["shape"], spec["params"]["n"])
    workers = spec["workers"]
    if spec["impl"] == "stock":
        backend = stock.backend_for(url)
        try:
            stock.compile_only(shapes.flat(5), backend, workers)
            measured(stock.compile_only, nodes, backend, workers)
        finally:
            backend.close()
        return
    nf.configure(len(nodes))
    engine = nf.make_engine(url, workers)
    try:
        nf.warm_up(engine)
        # Only the factory and TaskFlow's compile are measured, not storing the stack.
        measured.result.update(nf.compile_stack(engine, shapes.template(nodes), measured))
    finally:
        engine.close()


def run_group(spec, url, measured):
    """A ResourceGroup of nested stacks run by ``conductors`` conductor daemons."""
    from bench import nf, shapes

    params = spec["params"]
    nf.require_resource_group()
    nf.conductor_command()
    if url.startswith("sqlite"):
        raise nf.NotAvailable("conductors need a server database")
    jobboard = nf.zookeeper_url(REPO_ROOT)
    template, files = shapes.group_templates(params["members"], params["per_member"],
                                             params["wait"])
    nf.configure(params["members"] * (params["per_member"] + 1) + 10)
    engine = nf.make_engine(url, spec["workers"], jobboard_url=jobboard,
                            transport_url=nf.TRANSPORT_URL)
    try:
        with nf.Conductors(params["conductors"], url, jobboard, nf.TRANSPORT_URL,
                           spec["workers"], REPO_ROOT) as conductors:
            nf.warm_up(engine)
            measured(nf.create, engine, template, files)
        measured.result["conductor_rss_mb"] = conductors.peak_rss_mb
    finally:
        engine.close()


def run_nested(spec, url, measured):
    """``children`` nested stacks of ``per_child`` resources each, embedded."""
    from bench import nf, shapes

    params = spec["params"]
    template, files = shapes.nested_templates(params["children"], params["per_child"])
    nf.require_nested_stacks(template, files)
    nf.configure(params["children"] * (params["per_child"] + 1) + 10)
    engine = nf.make_engine(url, spec["workers"])
    try:
        nf.warm_up(engine)
        measured(nf.create, engine, template, files)
    finally:
        engine.close()


def run_validate(spec, url, measured):
    """Engine.validate_template of the case's template (nothing is stored)."""
    from bench import nf, validation

    params = spec["params"]
    nf.configure(params["n"])
    engine = nf.make_engine(url, spec["workers"])
    try:
        if not hasattr(engine, "validate_template"):
            raise nf.NotAvailable("this nestedflow has no Engine.validate_template")
        if params["shape"] == "real":
            template, files, environment, parameters, _ = validation.real(
                set(engine.registry.names()))
        else:
            template, files, environment, parameters = (
                validation.generated(params["n"]), None, None, None)
        # First call: lazy imports, plugin scan, yaql's parser.
        engine.validate_template(template, files=files, environment=environment,
                                 parameters=parameters)
        measured(engine.validate_template, template, files=files, environment=environment,
                 parameters=parameters)
    finally:
        engine.close()


def run_preview(spec, url, measured):
    """Engine.preview_stack of a flat stack of N resources (nothing is stored)."""
    from bench import nf, shapes

    nodes = shapes.build("flat", spec["params"]["n"])
    nf.configure(len(nodes))
    engine = nf.make_engine(url, spec["workers"])
    try:
        nf.warm_up(engine)
        measured(engine.preview_stack, nf._name("preview"), shapes.template(nodes))
    finally:
        engine.close()


def run_update(spec, url, measured):
    """An update of N TestResources: half in place, a quarter replaced, a
    quarter unchanged. Stock TaskFlow's baseline runs the same number of
    tasks once (it has no update: a traversal of the new graph)."""
    from bench import nf, shapes, stock

    n = spec["params"]["n"]
    if spec["impl"] == "stock":
        stock.run_measured(shapes.flat(n), url, spec["workers"], measured)
        return
    old, new = shapes.update_templates(n)
    nf.configure(n)
    engine = nf.make_engine(url, spec["workers"])
    try:
        nf.warm_up(engine)
        stack = nf.create(engine, old)
        nf.quiesce(engine)
        measured(nf.update, engine, stack, new)
    finally:
        engine.close()


def run_heat(spec, url, measured):
    """Flat create of N resources of one type, warm: nestedflow here, Heat's
    own engines in the peer virtualenv's python (bench.heat_engines)."""
    from bench import heat_engines, nf

    params = spec["params"]
    if spec["impl"] in heat_engines.ENGINES:
        heat_engines.run(spec, url, measured)
        return
    nf.configure(params["n"])
    engine = nf.make_engine(url, spec["workers"])
    try:
        nf.warm_up(engine)
        measured(nf.create, engine, heat_engines.template(params["n"], params["type"]))
    finally:
        engine.close()


def run_corpus(spec, url, measured):
    from bench import corpus_tree

    corpus_tree.run(spec, url, measured)


KINDS = {
    "corpus": run_corpus,
    "heat": run_heat,
    "preview": run_preview,
    "update": run_update,
    "stack": run_stack,
    "compile": run_compile,
    "group": run_group,
    "nested": run_nested,
    "validate": run_validate,
}


def run(spec):
    from bench import measure, nf

    counter = measure.SqlCounter().install()
    measured = Measured(counter, spec.get("profile"))
    url, cleanup = measure.fresh_database(spec["db"], spec["pg_url"])
    try:
        KINDS[spec["kind"]](spec, url, measured)
    except nf.NotAvailable as error:
        return {"na": str(error)}
    finally:
        cleanup()
    return measured.result


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    spec_path, out_path = argv
    _quiet()
    with open(spec_path) as handle:
        spec = json.load(handle)
    code = 0
    try:
        result = run(spec)
    except Exception as error:  # reported in the table, never hidden
        result = {"error": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
        code = 1
    from bench import measure

    own, children = measure.peak_rss_mb()
    result["rss_mb"] = own
    result["children_rss_mb"] = max(children, result.get("conductor_rss_mb", 0.0))
    with open(out_path, "w") as handle:
        json.dump(result, handle)
    return code


if __name__ == "__main__":
    sys.exit(main())
