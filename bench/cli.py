"""``python -m bench``: run the cases, print the table, write the JSON."""

import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import cases, corpus_tree, heat_engines, machine, measure, report

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(REPO_ROOT, "bench", "results.json")


def _utcnow():
    # datetime.UTC needs Python 3.11; the project supports 3.10.
    return datetime.datetime.now(datetime.timezone.utc)  # noqa: UP017


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="nestedflow benchmark suite: nestedflow against stock TaskFlow "
        "and the critical-path lower bound, every run in a fresh process.")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and 1 run (CI smoke test)")
    parser.add_argument("--cases", help="comma-separated case names (default: all); "
                        "see --list")
    parser.add_argument("--sizes", help="comma-separated resource counts: only rows of "
                        "these sizes (e.g. 1000)")
    parser.add_argument("--runs", type=int, help="runs per row, median reported "
                        "(default 3, --quick 1)")
    parser.add_argument("--heavy-runs", type=int, default=1,
                        help="runs of rows with >= 5,000 resources (default 1)")
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--pg-url", default=os.environ.get("NESTEDFLOW_BENCH_PG_URL",
                                                           measure.DEFAULT_PG_URL),
                        help="PostgreSQL database the suite owns: its public schema is "
                        "dropped before every run (created if missing; default %(default)s, "
                        "or $NESTEDFLOW_BENCH_PG_URL)")
    parser.add_argument("--workers", type=int,
                        help="workers per traversal for nestedflow and stock TaskFlow "
                        "alike (default: nestedflow's [engine] max_workers)")
    parser.add_argument("--json", default=DEFAULT_JSON, help="results file "
                        "(default bench/results.json)")
    parser.add_argument("--rst", help="also write the results as an RST fragment here")
    parser.add_argument("--no-stock", action="store_true", help="skip the stock baselines")
    parser.add_argument("--timeout", type=float, default=5400.0,
                        help="seconds one run may take before it is killed")
    parser.add_argument("--profile", metavar="DIR",
                        help="cProfile the measured phase (every thread) into DIR/*.prof; "
                        "timings are then inflated")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a target FAILs (errors always exit 1)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    if args.workers is None:
        from nestedflow.conf import CONF

        args.workers = CONF.engine.max_workers
    return args


def selected_cases(args):
    if not args.cases:
        return list(cases.CASES)
    chosen = []
    for name in args.cases.split(","):
        name = name.strip()
        if name not in cases.BY_NAME:
            raise SystemExit(f"unknown case {name!r}; known: {', '.join(cases.BY_NAME)}")
        chosen.append(cases.BY_NAME[name])
    return chosen


def dbs_for(case, selected):
    if case.dbs == "each":
        return list(selected)
    preferred = "postgresql" if case.dbs == "server" else "sqlite"
    return [preferred] if preferred in selected else [selected[0]]


def plan(args):
    selected = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    sizes = {int(n) for n in args.sizes.split(",")} if args.sizes else None
    rows = []
    for case in selected_cases(args):
        for params in (case.quick if args.quick else case.variants):
            if sizes is not None and params["n"] not in sizes:
                continue
            if case.kind == "corpus":
                params = corpus_tree.with_kept(params)
            for db in dbs_for(case, selected):
                rows.append({"case": case.name, "db": db, "label": cases.label(case, params),
                             "params": dict(params),
                             "bound_s": cases.bound(case, params, args.workers)})
    return rows


class Runner:
    def __init__(self, args, log, pythons=None):
        self.args = args
        self.log = log
        self.tmp = tempfile.mkdtemp(prefix="nestedflow-bench-runs-")
        self.count = 0
        #: implementation -> the python its runs use (a peer's virtualenv); default ours.
        self.pythons = pythons or {}

    def run(self, case, row, impl, index):
        """One run in a fresh process; returns its result dict."""
        self.count += 1
        spec = {"kind": case.kind, "impl": impl, "db": row["db"], "params": row["params"],
                "workers": self.args.workers, "pg_url": self.args.pg_url}
        stem = f"{row['case']}-{row['db']}-{row['label']}-{impl}-run{index}".replace(" ", "_")
        if self.args.profile:
            os.makedirs(self.args.profile, exist_ok=True)
            spec["profile"] = os.path.abspath(os.path.join(self.args.profile, stem + ".prof"))
        spec_path = os.path.join(self.tmp, stem + ".spec.json")
        out_path = os.path.join(self.tmp, stem + ".out.json")
        log_path = os.path.join(self.tmp, stem + ".log")
        with open(spec_path, "w") as handle:
            json.dump(spec, handle)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO_ROOT, env.get("PYTHONPATH")]))
        env.setdefault("PYTHONWARNINGS", "ignore")
        started = time.monotonic()
        with open(log_path, "w") as log:
            # Own session: a timeout kills the run and any conductor it started.
            python = self.pythons.get(impl, sys.executable)
            proc = subprocess.Popen([python, "-m", "bench.worker", spec_path, out_path],
                                    cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                proc.wait(timeout=self.args.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return {"error": f"timeout after {self.args.timeout:.0f} s"}
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
        wall = time.monotonic() - started
        try:
            with open(out_path) as handle:
                result = json.load(handle)
        except (OSError, ValueError):
            with open(log_path) as handle:
                tail = handle.read()[-600:]
            result = {"error": f"worker exited {proc.returncode} without a result: {tail}"}
        result["process_wall_s"] = wall
        return result


def summarize(runs, n, bound):
    """Medians over the successful runs of one implementation."""
    ok = [r for r in runs if "elapsed_s" in r and "error" not in r]
    if not ok:
        return None
    median = statistics.median(r["elapsed_s"] for r in ok)
    statements = statistics.median(r["statements"] for r in ok)
    commits = statistics.median(r["commits"] for r in ok)
    peak = max(max(r.get("rss_mb", 0.0), r.get("children_rss_mb", 0.0)) for r in ok)
    summary = {
        "median_s": median,
        "runs_ok": len(ok),
        "times_s": [r["elapsed_s"] for r in ok],
        "rate": n / median if median else None,
        "ms_per_res": (median - (bound or 0.0)) / n * 1000.0,
        "cpu_ms_per_res": statistics.median(r.get("cpu_s", 0.0) for r in ok) / n * 1000.0,
        "sql_per_res": statements / n,
        "commits_per_res": commits / n,
        "peak_rss_mb": peak,
        "max_loadavg": max(r.get("loadavg", 0.0) for r in ok),
    }
    for key in ("rollbacks", "checkouts", "connects"):
        summary[key + "_per_res"] = statistics.median(r.get(key, 0) for r in ok) / n
    kinds = ok[0].get("sql_by_kind") or {}
    summary["sql_by_kind_per_res"] = {kind: round(count / n, 3) for kind, count in kinds.items()}
    for key in ("build_s", "tf_compile_s", "validate_store_s", "cpu_s", "total_s", "validate_s",
                "validate_cpu_s"):
        if key in ok[0]:
            summary[key] = statistics.median(r[key] for r in ok)
    return summary


def peer_pythons(rows):
    """The python of every peer implementation the rows need; {} and a
    one-line message when Heat's peer virtualenv is not installed."""
    peers = {impl for row in rows for impl in cases.BY_NAME[row["case"]].peers}
    if not peers:
        return {}
    python = heat_engines.peer_python(REPO_ROOT)
    if python is None:
        print(f"heat-engines: skipped: {heat_engines.MISSING}", file=sys.stderr)
        return {}
    return dict.fromkeys(peers, python)


def execute(args, rows, results, stock_cache, write):
    pythons = peer_pythons(rows)
    runner = Runner(args, log=sys.stderr, pythons=pythons)
    total = len(rows)
    for number, row in enumerate(rows, 1):
        case = cases.BY_NAME[row["case"]]
        n = row["params"]["n"]
        runs = args.heavy_runs if n >= case.heavy else args.runs
        if case.peers and not all(impl in pythons for impl in case.peers):
            row.update(status="skipped", note=f"skipped: {heat_engines.MISSING}", runs=[],
                       runs_requested=runs, errors=[])
            results.append(row)
            write()
            continue
        peer_runs = {impl: [] for impl in case.peers}
        key = None if args.no_stock else cases.stock_key(case, row["params"], row["db"],
                                                          args.workers)
        need_stock = key is not None and key not in stock_cache
        nf_runs, stock_runs = [], []
        status = "ok"
        for index in range(1, runs + 1):
            result = runner.run(case, row, "nestedflow", index)
            nf_runs.append(result)
            _progress(number, total, row, "nestedflow", index, runs, result)
            if "na" in result:
                status = "na"
                need_stock = False
                break
            if need_stock:
                result = runner.run(case, row, "stock", index)
                stock_runs.append(result)
                _progress(number, total, row, "stock TaskFlow", index, runs, result)
            for impl in case.peers:  # interleaved with nestedflow's runs: same load
                result = runner.run(case, row, impl, index)
                peer_runs[impl].append(result)
                _progress(number, total, row, heat_engines.TITLES[impl], index, runs, result)
        if need_stock:
            stock_cache[key] = {"summary": summarize(stock_runs, n, row["bound_s"]),
                                "runs": stock_runs, "first": f"{row['case']} {row['db']}"}
            row["stock_shown"] = True
        errors = [r["error"] for r in nf_runs if "error" in r]
        summary = summarize(nf_runs, n, row["bound_s"])
        if status == "ok" and summary is None:
            status = "error"
        row.update(status=status, runs=nf_runs, runs_requested=runs, errors=errors)
        if status == "na":
            row["note"] = nf_runs[-1]["na"]
        elif errors:
            row["note"] = errors[0]
        if summary:
            row.update(summary)
        if key is not None and key in stock_cache:
            stock = stock_cache[key]
            row["stock"] = stock["summary"]
            row["stock_runs"] = stock["runs"] if row.get("stock_shown") else []
            row["stock_from"] = stock["first"]
            stock_errors = [r["error"] for r in stock["runs"] if "error" in r]
            if stock_errors:
                row["stock_errors"] = stock_errors
            if stock["summary"] and summary:
                row["speedup"] = stock["summary"]["median_s"] / summary["median_s"]
        if summary and row["bound_s"]:
            row["vs_bound"] = summary["median_s"] / row["bound_s"]
        if case.peers:
            add_peers(row, peer_runs, n)
        results.append(row)
        write()


def add_peers(row, peer_runs, n):
    """Each peer's summary, its errors, and its time over nestedflow's."""
    row["peers"], row["peer_runs"], row["vs_peers"], row["peer_errors"] = {}, peer_runs, {}, {}
    for impl, runs in peer_runs.items():
        summary = summarize(runs, n, None)
        row["peers"][impl] = summary
        problems = [r.get("error") or r.get("na") for r in runs if "error" in r or "na" in r]
        if problems:
            row["peer_errors"][impl] = problems
        if summary and row.get("median_s"):
            row["vs_peers"][impl] = summary["median_s"] / row["median_s"]


def _progress(number, total, row, impl, index, runs, result):
    if "na" in result:
        what = f"n/a ({result['na']})"
    elif "error" in result:
        what = f"ERROR {result['error'][:200]}"
    else:
        what = (f"{result['elapsed_s']:.3f} s, {result['statements']} SQL, "
                f"{max(result['rss_mb'], result['children_rss_mb']):.0f} MB, "
                f"load {result.get('loadavg', 0.0):.1f}")
    print(f"[{number}/{total}] {row['case']} {row['db']} {row['label']} {impl} "
          f"run {index}/{runs}: {what}", file=sys.stderr, flush=True)


def evaluate(results):
    for row in results:
        if row["status"] == "ok":
            row["targets"] = [vars(t) for t in cases.targets(row, results)]
        else:
            row["targets"] = [{"text": t.text, "passed": None}
                              for t in cases.targets(row, results)]


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        for case in cases.CASES:
            sizes = ", ".join(cases.label(case, p) for p in case.variants)
            print(f"{case.name:12} {case.description} [{sizes}]")
        return 0
    rows = plan(args)
    uses_pg = any(row["db"] == "postgresql" for row in rows)
    data = {
        "suite": "nestedflow bench",
        "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": args.quick,
        "runs": args.runs,
        "heavy_runs": args.heavy_runs,
        "workers": args.workers,
        "profiled": bool(args.profile),
        "machine": machine.describe(REPO_ROOT, args.pg_url if uses_pg else None),
        "started": _now(),
        "rows": [],
    }

    def write():
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as handle:
            json.dump(data, handle, indent=1, default=str)

    print(f"{len(rows)} rows on {machine.one_line(data['machine'])}", file=sys.stderr)
    try:
        execute(args, rows, data["rows"], {}, write)
    finally:
        evaluate(data["rows"])
        data["finished"] = _now()
        write()
    report.print_table(data)
    print(f"results: {args.json}")
    if args.rst:
        with open(args.rst, "w") as handle:
            handle.write(report.rst(data))
        print(f"rst: {args.rst}")
    if args.profile:
        print(f"profiles: {args.profile} (python -m bench.report --profile FILE.prof)")
    failed = any(t["passed"] is False for row in data["rows"] for t in row["targets"])
    errored = any(row["status"] == "error" or row.get("stock_errors")
                  or any("error" in r for runs in (row.get("peer_runs") or {}).values()
                         for r in runs) for row in data["rows"])
    return 1 if errored or (args.strict and failed) else 0


def _now():
    return _utcnow().isoformat(timespec="seconds")
