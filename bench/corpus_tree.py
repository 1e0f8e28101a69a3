"""The ``corpus-tree`` rows: a real nested template tree from tests/corpus,
created and deleted, by nestedflow, stock TaskFlow and Heat 27's engines.

The trees (``python -m bench.corpus_tree --select`` re-measures the choice:
it creates every entry the manifest records as passing and counts its tree):

* ``LARGEST``, tacker's ``etsi/nfv/functional/.../helloworld3.yaml``: the
  largest tree nestedflow runs to CREATE_COMPLETE -- 35 resources in 6
  stacks (two OS::Heat::AutoScalingGroup of template resources VDU1.yaml and
  VDU2.yaml, 1 + 2 members, four OS::Heat::ScalingPolicy, networks, ports,
  volumes, servers). Three other helloworld3 variants tie at 35/6; the next
  is 30/5. The manifest's TripleO trees are smaller (at most 11 resources:
  nova-manager-container-puppet.yaml, 11 in 4 stacks).
* ``HEAT_LARGEST``, tacker's ``change_vnfpkg_max_individual_vnfc/.../sample3.yaml``:
  25 resources in 3 stacks (template resources VDU1-after.yaml and
  VDU2-after.yaml), the largest tree Heat runs here. Heat cannot create
  ``LARGEST`` without Keystone: OS::Heat::ScalingPolicy is a
  SignalResponder whose create makes a stack user in Keystone --
  "ConnectFailure: resources.VDU2_scale_out: Unable to establish connection
  to http://keystone.invalid:5000/v3/auth/tokens"; every larger tree has
  ScalingPolicy too.

Both engines get the same inputs (bench.corpus): the harness's wildcard
registry (``"OS::Nova::*": OS::Heat::None``...; Heat's environment supports
such keys, heat/engine/environment.py ``GlobResourceInfo``), the manifest's
parameters and parameter_defaults; the OS::Heat types nestedflow implements
stay real on both. Neither tree has a software deployment or a wait
condition, so nothing waits for a server's signal on either engine (no
NO_SIGNAL mapping, no agent): same resources, same work.

Heat's context is an admin's here (the flat heat-engines rows use a
user's): Heat's policy refuses OS::Cinder::VolumeType to non-admins by the
type as written, before the registry maps it ("You are not authorized to
use resource_types: OS::Cinder::VolumeType"); tacker creates these stacks
as an admin too. On an SQLite file Heat fails the tree (legacy and
convergence, WAL or delete journal, paced or not): nested stacks are
created by other threads, and a write gets "database is locked"; the rows
report that error.

Each run: a warm-up create of the same tree (imports, nested-stack paths
and caches warmed alike on every engine), then the measured phase -- the
create, or for ``phase: delete`` an unmeasured create then the delete.
The row's counts are checked against the tree's resources and stacks.
Stock TaskFlow runs the same number of no-op tasks flat (bench.stock): the
tree's nested stacks are flows of their own in nestedflow and its
dependencies a few resources deep, which a flat flow of no-op tasks does
not change much.
"""

import argparse
import sys
import tempfile
import uuid

from bench import corpus

LARGEST = "tacker/samples/tests/etc/samples/etsi/nfv/functional/BaseHOT/simple/helloworld3.yaml"
HEAT_LARGEST = ("tacker/samples/tests/functional/sol_v2_common/"
                "change_vnfpkg_max_individual_vnfc/contents/BaseHOT/simple/sample3.yaml")
#: Why Heat's peer does not run a tree (its worker reports it as n/a).
HEAT_CANNOT = {LARGEST: "Heat cannot create this tree without Keystone: its "
               "OS::Heat::ScalingPolicy makes a stack user there (ConnectFailure: "
               "resources.VDU2_scale_out); see HEAT_LARGEST"}
NAMES = {LARGEST: "helloworld3", HEAT_LARGEST: "sample3"}
#: tree -> (resources, stacks) as created; checked on every run.
COUNTS = {LARGEST: (35, 6), HEAT_LARGEST: (25, 3)}
NESTED_DEPTH = 10


def variants():
    """Both trees, create and delete; ``kept`` is filled in by bench.cli.plan."""
    return tuple({"template": t, "phase": phase, "n": COUNTS[t][0], "stacks": COUNTS[t][1]}
                 for t in (LARGEST, HEAT_LARGEST) for phase in ("create", "delete"))


def label(params):
    # No "/": the label names the run's files (bench.cli.Runner).
    return (f"{NAMES[params['template']]} ({params['n']} in {params['stacks']} stacks) "
            f"{params['phase']}")


def with_kept(params):
    """``params`` with the tree's types nestedflow implements (kept real on
    every engine), worked out here where nestedflow's registry is importable."""
    from bench import nf

    return {**params, "kept": corpus.kept_types(params["template"], nf.resource_types())}


def _check(counts, params):
    if counts != (params["n"], params["stacks"]):
        raise RuntimeError(f"the tree has {counts[0]} resources in {counts[1]} stacks, "
                           f"not {params['n']} in {params['stacks']}")


def tree_counts(engine, stack_id):
    """(resources, stacks) of a nestedflow stack's whole tree."""
    resources = engine.list_resources(stack_id, nested_depth=NESTED_DEPTH)
    return len(resources), len({r.stack_id for r in resources} | {stack_id})


def run_nestedflow(spec, url, measured):
    from bench import nf

    params = spec["params"]
    text, files, environment, parameters = corpus.inputs(params["template"], params["kept"])
    nf.configure(params["n"])
    engine = nf.make_engine(url, spec["workers"])
    inputs = {"files": files, "environment": environment, "parameters": parameters}
    try:
        nf.create(engine, text, **inputs)  # the warm-up
        nf.quiesce(engine)
        if params["phase"] == "delete":
            stack = nf.create(engine, text, **inputs)
            _check(tree_counts(engine, stack.id), params)
            nf.quiesce(engine)
            measured(nf.delete, engine, stack)
        else:
            stack = measured(nf.create, engine, text, **inputs)
            _check(tree_counts(engine, stack.id), params)
    finally:
        engine.close()
    measured.result.update(tree_resources=params["n"], tree_stacks=params["stacks"])


def run_heat(spec, url, measured):
    """Heat's engine in the peer's python (bench.heat_engines's harness)."""
    from bench import heat_engines, nf

    params = spec["params"]
    if params["template"] in HEAT_CANNOT:
        raise nf.NotAvailable(HEAT_CANNOT[params["template"]])
    text, files, environment, parameters = corpus.inputs(params["template"], params["kept"])
    # Heat's RPC API takes the environment whole, parameters in it.
    environment = {**environment, "parameters": parameters}

    def create(heat_engine, timed=lambda fn, *args: fn(*args)):
        # As heat-api parses it, before the engine (and after Heat's options
        # are registered, which the parser reads).
        from heat.common import template_format

        tmpl = template_format.parse(text)
        stack_id, state = timed(heat_engine.create, tmpl, files, environment)
        heat_engine.check(stack_id, state, "CREATE")
        return stack_id

    def phase(heat_engine):
        if params["phase"] == "delete":
            stack_id = create(heat_engine)
            _check(heat_engine.tree_counts(stack_id), params)
            heat_engine.drain()
            heat_engine.check(stack_id, measured(heat_engine.delete, stack_id), "DELETE")
        else:
            _check(heat_engine.tree_counts(create(heat_engine, measured)), params)

    heat_engines.run_phases(spec, url, measured, create, phase, admin=True,
                            validate_apart=False)
    measured.result.update(tree_resources=params["n"], tree_stacks=params["stacks"])


def run(spec, url, measured):
    """bench.worker's entry point for the case."""
    from bench import heat_engines

    if spec["impl"] in heat_engines.ENGINES:
        return run_heat(spec, url, measured)
    if spec["impl"] == "stock":
        # Not imported for Heat's peer, which has no TaskFlow.
        from bench import shapes, stock

        return stock.run_measured(shapes.flat(spec["params"]["n"]), url, spec["workers"],
                                  measured)
    return run_nestedflow(spec, url, measured)


# -- choosing the trees --------------------------------------------------------

def select(top=10):
    """Create every entry the manifest records as passing; the ``top``
    largest trees as (resources, stacks, template)."""
    import nestedflow

    harness = corpus.harness()
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = nestedflow.Engine(db_url=f"sqlite:///{tmp}/select.db")
        known = set(engine.registry.names())
        try:
            for found in harness.load_manifest()["templates"]:
                if found.get("result") != "pass":
                    continue
                text, files, environment, parameters = corpus.inputs(
                    found["template"], corpus.kept_types(found["template"], known))
                stack = engine.create_stack(f"select-{uuid.uuid4().hex[:8]}", text,
                                            parameters=parameters, files=files,
                                            environment=environment)
                created = harness.wait_as_agent(engine, stack.id, 120)
                if (created.action, created.status) == ("CREATE", "COMPLETE"):
                    sizes.append((*tree_counts(engine, stack.id), found["template"]))
        finally:
            engine.close()
    return sorted(sizes, key=lambda size: (-size[0], -size[1], size[2]))[:top]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.corpus_tree",
                                     description="the corpus trees by size, as created")
    parser.add_argument("--select", action="store_true", required=True)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    for resources, stacks, template in select(args.top):
        print(f"{resources:4} resources {stacks:3} stacks  {template}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
