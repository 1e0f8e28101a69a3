"""The benchmark cases, their sizes, baselines and the issue's targets.

A case expands into rows (one per size or variant and database); each row
runs nestedflow and, where the case has one, the stock-TaskFlow baseline
in the same invocation, several times, each run in a fresh process.
"""

import dataclasses

from bench import corpus_tree, shapes

#: Per-resource engine overhead allowed on PostgreSQL, and the speed-up over stock.
PG_OVERHEAD_MS = 5.0
PG_SPEEDUP = 10.0
FLAT_RATE = 300.0
CHAIN10_S = 0.1
COMPILE_1000_S = 1.0
COMPILE_SCALING = 4.5
DAG_SLACK = (1.10, 0.5)
GROUP_SPEEDUP = 3.0
RSS_LIMIT_MB = 1024.0
#: Validation must stay linear: twice the resources, at most this much more time.
VALIDATE_SCALING = 2.5
PREVIEW_1000_S = 0.5
UPDATE_RATE = 300.0
#: nestedflow's flat create against Heat 27's legacy engine (issue 36: 15x, 30x the aim).
HEAT_LEGACY_SPEEDUP = 15.0


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    kind: str  # worker entry point: stack | compile | group | nested | validate | corpus...
    description: str
    variants: tuple  # full-size params dicts
    quick: tuple  # --quick params dicts
    dbs: str = "each"  # each selected db | "server": PostgreSQL if selected | "sqlite"
    stock: bool = True  # has a stock-TaskFlow baseline
    heavy: int = 5000  # variants with at least this many resources run --heavy-runs times
    #: Other engines run beside nestedflow, interleaved run by run (bench.heat_engines).
    peers: tuple = ()


def _sized(shape, sizes, **extra):
    return tuple({"shape": shape, "n": n, **extra} for n in sizes)


CASES = (
    Case("flat-create", "stack", "N independent OS::Heat::None: stack create",
         _sized("flat", (1000, 5000), phase="create"), _sized("flat", (50,), phase="create")),
    # A type with a real (non-database) action: its physical object is a
    # row of the shared store, made and checked through its fenced API.
    Case("flat-create-test", "stack", "N independent OS::Heat::TestResource: stack create",
         _sized("flat", (1000,), phase="create", type="OS::Heat::TestResource"),
         _sized("flat", (50,), phase="create", type="OS::Heat::TestResource")),
    Case("flat-delete", "stack", "N independent OS::Heat::None: stack delete",
         _sized("flat", (1000, 5000), phase="delete"), _sized("flat", (50,), phase="delete")),
    Case("chain", "stack", "a chain of N OS::Heat::None (each depends on the previous)",
         _sized("chain", (10, 500), phase="create"), _sized("chain", (10, 50), phase="create")),
    Case("tree", "stack", "a binary tree of N OS::Heat::None (children after parents)",
         _sized("tree", (1023,), phase="create"), _sized("tree", (63,), phase="create")),
    Case("dag", "stack",
         "a seeded random DAG of N TestResources, wait_secs 0.05-0.5 s, m workers",
         _sized("dag", (300,), phase="create"), _sized("dag", (40,), phase="create")),
    Case("compile", "compile", "flow factory + TaskFlow load/compile of N resources",
         _sized("flat", (1000, 2000, 4000)), _sized("flat", (100, 200, 400)), dbs="sqlite"),
    Case("group", "group",
         "ResourceGroup of M nested stacks of K TestResources (wait W) on C conductors",
         tuple({"members": 50, "per_member": 20, "wait": 0.5, "conductors": c, "n": 1000}
               for c in (1, 4)),
         tuple({"members": 4, "per_member": 3, "wait": 0.1, "conductors": c, "n": 12}
               for c in (1, 2)),
         dbs="server", stock=False),
    Case("nested-rss", "nested", "C nested stacks (template resources) of K OS::Heat::None",
         ({"children": 100, "per_child": 100, "n": 10000},),
         ({"children": 5, "per_child": 10, "n": 50},),
         dbs="server", stock=False, heavy=10000),
    Case("validate", "validate",
         "Engine.validate_template: TripleO's nova-compute template (real), and N "
         "resources with conditions, yaql, if and string functions",
         ({"shape": "real", "n": 5}, *_sized("conditional", (500, 1000))),
         ({"shape": "real", "n": 5}, *_sized("conditional", (100, 200))),
         dbs="sqlite", stock=False),
    Case("preview", "preview", "Engine.preview_stack of N independent OS::Heat::None",
         ({"n": 1000},), ({"n": 50},), stock=False),
    Case("update-mixed", "update",
         "update of N TestResources: half in place, a quarter replaced, a quarter unchanged",
         ({"n": 1000},), ({"n": 40},)),
    # Heat's deliberate sleeps off (as its unit tests run it), then as shipped
    # at a size its convergence's 1 s per leaf allows (bench/heat_engines.py).
    # Quick: as shipped, the one way Heat's convergence creates on SQLite.
    Case("heat-engines", "heat",
         "N independent resources: create, warm, beside Heat 27's legacy and convergence "
         "engines in the peer virtualenv (validate timed apart)",
         (*({"n": 1000, "type": t, "pacing": "off"}
            for t in ("OS::Heat::None", "OS::Heat::TestResource")),
          {"n": 100, "type": "OS::Heat::None", "pacing": "shipped"}),
         ({"n": 10, "type": "OS::Heat::None", "pacing": "shipped"},),
         stock=False, peers=("heat-legacy", "heat-convergence")),
    # The largest corpus tree nestedflow runs, and the largest Heat runs
    # here (bench/corpus_tree.py says which and why): create, and delete.
    Case("corpus-tree", "corpus",
         "a real nested template tree from tests/corpus (cloud types mapped to "
         "OS::Heat::None as the corpus tests map them): create, delete; beside Heat 27's "
         "engines", corpus_tree.variants(), corpus_tree.variants(),
         peers=("heat-legacy", "heat-convergence")),
)

BY_NAME = {case.name: case for case in CASES}


def label(case, params):
    if case.kind == "group":
        return (f"{params['members']}x{params['per_member']} "
                f"c={params['conductors']}")
    if case.kind == "nested":
        return f"{params['children']}x{params['per_child']}"
    if case.kind == "validate" and params["shape"] == "real":
        return f"real ({params['n']})"
    if case.kind == "corpus":
        return corpus_tree.label(params)
    if case.kind == "heat":
        shipped = " (Heat paced)" if params.get("pacing") == "shipped" else ""
        return f"{params['n']} {params['type'].rsplit('::', 1)[-1]}{shipped}"
    return str(params["n"])


def bound(case, params, workers):
    """The critical-path lower bound of a row, or None where it says nothing (no-op)."""
    if case.kind == "stack" and params["shape"] == "dag":
        return shapes.lower_bound(shapes.build("dag", params["n"]), workers)
    if case.kind == "group":
        return params["wait"]
    return None


def stock_key(case, params, db, workers):
    """Rows with the same key share one baseline (a delete runs the same graph)."""
    if not case.stock:
        return None
    # A tree's delete runs the same graph as its create, as flat-delete's does.
    return (case.kind, params.get("shape"), params["n"], db, workers)


@dataclasses.dataclass
class Target:
    text: str
    passed: object  # True | False | None (not measurable)


def _check(text, value, ok):
    return Target(text, None if value is None else bool(ok(value)))


def targets(row, rows):
    """The issue's targets that apply to ``row`` (a dict built by the runner)."""
    case, params, db = BY_NAME[row["case"]], row["params"], row["db"]
    n = params["n"]
    median = row.get("median_s")
    out = []
    if case.kind == "stack" and params["shape"] != "dag":
        if case.name == "flat-create" and n == 1000:
            out.append(_check(f">= {FLAT_RATE:.0f} res/s", row.get("rate"),
                              lambda v: v >= FLAT_RATE))
        if db == "postgresql":
            out.append(_check(f"<= {PG_OVERHEAD_MS:.0f} ms/res", row.get("ms_per_res"),
                              lambda v: v <= PG_OVERHEAD_MS))
            out.append(_check(f">= {PG_SPEEDUP:.0f}x stock", row.get("speedup"),
                              lambda v: v >= PG_SPEEDUP))
        if params["shape"] == "chain" and n == 10:
            out.append(_check(f"< {CHAIN10_S} s", median, lambda v: v < CHAIN10_S))
    if case.kind == "stack" and params["shape"] == "dag":
        factor, slack = DAG_SLACK
        limit = None if row.get("bound_s") is None else factor * row["bound_s"] + slack
        text = f"<= {factor:.2f} x bound + {slack} s"
        if limit is not None:
            text += f" (= {limit:.2f} s)"
        out.append(_check(text, median, lambda v: v <= limit))
    if case.kind == "compile":
        if n == 1000:
            out.append(_check(f"< {COMPILE_1000_S:.0f} s", median, lambda v: v < COMPILE_1000_S))
        quarter = _find(rows, case.name, db, n // 4) if n % 4 == 0 else None
        if quarter is not None:
            ratio = None
            if median is not None and quarter.get("median_s"):
                ratio = median / quarter["median_s"]
                row["scaling"] = ratio
            out.append(_check(f"<= {COMPILE_SCALING}x the n={n // 4} time"
                              + ("" if ratio is None else f" (is {ratio:.2f}x)"),
                              ratio, lambda v: v <= COMPILE_SCALING))
    if case.kind == "group" and params["conductors"] > 1:
        single = next((r for r in rows if r["case"] == case.name and r["db"] == db
                       and r["params"]["conductors"] == 1), None)
        speedup = None
        if single is not None and single.get("median_s") and median:
            speedup = single["median_s"] / median
        out.append(_check(f">= {GROUP_SPEEDUP:.0f}x faster than 1 conductor", speedup,
                          lambda v: v >= GROUP_SPEEDUP))
    if case.kind == "preview" and n == 1000:
        out.append(_check(f"< {PREVIEW_1000_S} s", median, lambda v: v < PREVIEW_1000_S))
    if case.kind == "update" and n == 1000:
        out.append(_check(f">= {UPDATE_RATE:.0f} res/s", row.get("rate"),
                          lambda v: v >= UPDATE_RATE))
    if case.kind == "heat" and n == 1000 and db == "sqlite" and \
            params["type"] == "OS::Heat::None" and params.get("pacing") == "off":
        ratio = (row.get("vs_peers") or {}).get("heat-legacy")
        out.append(_check(f">= {HEAT_LEGACY_SPEEDUP:.0f}x Heat legacy"
                          + ("" if ratio is None else f" (is {ratio:.1f}x)"),
                          ratio, lambda v: v >= HEAT_LEGACY_SPEEDUP))
    if case.kind == "nested":
        out.append(_check(f"peak RSS/process <= {RSS_LIMIT_MB:.0f} MB", row.get("peak_rss_mb"),
                          lambda v: v <= RSS_LIMIT_MB))
    if case.kind == "validate":
        out.extend(_validate_targets(case, row, rows, db, n, median))
    return out


def _validate_targets(case, row, rows, db, n, median):
    """Templates/s, next to the flat-create rate; linear scaling in N."""
    if median:
        flat = next((r for r in rows if r["case"] == "flat-create" and r["db"] == db
                     and r.get("rate")), None)
        note = f"{1.0 / median:.1f} templates/s, {median / n * 1000.0:.2f} ms/res validated"
        if flat is not None:
            note += (f"; flat-create {flat['label']} on {db}: {flat['rate']:.0f} res/s "
                     f"({1000.0 / flat['rate']:.2f} ms/res created)")
        row["note"] = note
    if row["params"]["shape"] != "conditional" or n % 2:
        return []
    half = next((r for r in rows if r["case"] == case.name and r["db"] == db
                 and r["params"].get("shape") == "conditional"
                 and r["params"]["n"] == n // 2), None)
    if half is None:
        return []
    ratio = median / half["median_s"] if median and half.get("median_s") else None
    if ratio is not None:
        row["scaling"] = ratio
    text = f"<= {VALIDATE_SCALING}x the n={n // 2} time" + (
        "" if ratio is None else f" (is {ratio:.2f}x)")
    return [_check(text, ratio, lambda v: v <= VALIDATE_SCALING)]


def _find(rows, case_name, db, n):
    return next((r for r in rows if r["case"] == case_name and r["db"] == db
                 and r["params"]["n"] == n), None)
