"""The results table (terminal and RST), and hot spots of a profile.

``python -m bench.report [results.json]`` prints the table of a results
file again (``--rst`` as an RST fragment for doc/source/performance.rst);
``python -m bench.report --profile FILE.prof`` prints a profile's hot spots.
"""

import argparse
import os
import pstats
import sys

from bench import heat_engines, machine

HEADERS = ("case", "db", "n", "impl", "median s", "res/s", "ms/res", "CPU ms/res", "SQL/res",
           "commits/res", "peak RSS MB", "vs stock", "bound s", "vs bound", "target", "result")
NA = "n/a (feature not available)"


def _num(value, digits=1):
    if value is None:
        return ""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _secs(value):
    if value is None:
        return ""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}" if value < 1 else f"{value:.2f}"


def _cells(summary):
    return [_secs(summary.get("median_s")), _num(summary.get("rate"), 0),
            _num(summary.get("ms_per_res"), 2), _num(summary.get("cpu_ms_per_res"), 2),
            _num(summary.get("sql_per_res"), 1),
            _num(summary.get("commits_per_res"), 1), _num(summary.get("peak_rss_mb"), 0)]


def _result(passed):
    return {True: "PASS", False: "FAIL", None: "n/a"}[passed]


def table_rows(data):
    """(cells, style) per line: the nestedflow row, then its stock baseline once."""
    lines = []
    for row in data["rows"]:
        n = row["label"]
        targets = row.get("targets") or []
        target_text = "\n".join(t["text"] for t in targets)
        result_text = "\n".join(_result(t["passed"]) for t in targets)
        if row["status"] == "na":
            cells = [NA] + [""] * 6
        elif row["status"] in ("error", "skipped"):
            cells = [row["status"]] + [""] * 6
        else:
            cells = _cells(row)
            runs = row.get("runs_ok", 0)
            if runs != row.get("runs_requested"):
                cells[0] += f" ({runs}/{row.get('runs_requested')} runs)"
        speedup = row.get("speedup")
        vs_stock = "" if speedup is None else f"{speedup:.2f}x"
        if row.get("stock") and not row.get("stock_shown"):
            vs_stock += " (shared)"
        bound = _secs(row.get("bound_s"))
        vs_bound = "" if row.get("vs_bound") is None else f"{row['vs_bound']:.2f}x"
        style = "FAIL" if any(t["passed"] is False for t in targets) else (
            "PASS" if targets and all(t["passed"] for t in targets) else "")
        lines.append(([row["case"], row["db"], n, "nestedflow", *cells, vs_stock, bound,
                       vs_bound, target_text, result_text], style))
        if row.get("stock_shown"):
            stock = row.get("stock")
            cells = _cells(stock) if stock else ["error"] + [""] * 6
            lines.append((["", "", "", "stock TaskFlow", *cells, "", "", "", "", ""], "stock"))
        lines.extend(peer_lines(row))
    return lines


def peer_lines(row):
    """A line per peer engine (Heat's): its create with its validation apart,
    and in the "vs stock" column how many times nestedflow's time it took."""
    lines = []
    for impl, summary in (row.get("peers") or {}).items():
        if summary is None:
            runs = (row.get("peer_runs") or {}).get(impl) or []
            # n/a: the peer cannot run the row at all (the note says why).
            na = runs and all("na" in run for run in runs)
            cells = ["n/a" if na else "error" if row.get("peer_errors", {}).get(impl)
                     else ""] + [""] * 6
        else:
            cells = _cells(summary)
            if summary.get("validate_s") is not None:
                cells[0] += f" (+{_secs(summary['validate_s'])} validate)"
        ratio = (row.get("vs_peers") or {}).get(impl)
        vs = "" if ratio is None else f"nestedflow {ratio:.1f}x"
        lines.append((["", "", "", heat_engines.TITLES[impl], *cells, vs, "", "", "", ""],
                      "stock"))
    return lines


def peer_note(row):
    """nestedflow's time and each Heat engine's, CPU beside wall (a shared
    machine's load lengthens wall time, not CPU time), or None."""
    if not row.get("peers") or not row.get("median_s"):
        return None
    parts = [f"nestedflow {row['median_s']:.2f} s, CPU {row.get('cpu_s', 0.0):.2f} s"]
    for impl, summary in row["peers"].items():
        if summary is None:
            continue
        apart = summary.get("validate_s") is not None  # else within the time
        part = (f"{heat_engines.TITLES[impl]} {summary['median_s']:.2f} s"
                + (f" (+{summary['validate_s']:.2f} s validate)" if apart else "")
                + f", CPU {summary.get('cpu_s', 0.0):.2f} s"
                + (f" (+{summary.get('validate_cpu_s', 0.0):.2f} s)" if apart else ""))
        ratio = row["vs_peers"].get(impl)
        cpu_ratio = summary.get("cpu_s", 0.0) / row["cpu_s"] if row.get("cpu_s") else None
        if ratio is not None:
            part += f": {ratio:.1f}x nestedflow's wall"
            if cpu_ratio is not None:
                part += f", {cpu_ratio:.1f}x its CPU"
        parts.append(part)
    return "; ".join(parts)


def notes(data):
    out = []
    cores = (data.get("machine") or {}).get("cores") or 1
    for row in data["rows"]:
        where = f"{row['case']} {row['db']} {row['label']}"
        load = max(row.get("max_loadavg") or 0.0,
                   (row.get("stock") or {}).get("max_loadavg") or 0.0)
        if load > cores + 1:
            out.append(f"{where}: load average up to {load:.1f} on {cores} cores during "
                       "its runs; other work was running, times are suspect")
        if row.get("note"):
            out.append(f"{where}: {row['note']}")
        elif row["case"] == "group" and row["status"] == "ok":
            out.append(f"{where}: SQL and CPU are the engine process's only; the conductors "
                       "run in their own processes (their peak RSS is included)")
        for error in row.get("stock_errors") or []:
            out.append(f"{where} stock TaskFlow: {error}")
        if peer_note(row):
            out.append(f"{where}: {peer_note(row)}")
        for impl, problems in (row.get("peer_errors") or {}).items():
            out.append(f"{where} {heat_engines.TITLES[impl]}: {problems[0]}")
    return out


def print_table(data, file=None):
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, width=max(200, Console().width))
    title = "nestedflow bench" + (" (--quick)" if data.get("quick") else "")
    if data.get("profiled"):
        title += " -- PROFILED, times inflated"
    table = Table(title=title, caption=machine.one_line(data["machine"]), show_lines=True)
    for header in HEADERS:
        justify = "left" if header in ("case", "db", "impl", "target", "result") else "right"
        table.add_column(header, justify=justify)
    styles = {"FAIL": "red", "PASS": "green", "stock": "dim"}
    for cells, style in table_rows(data):
        table.add_row(*cells, style=styles.get(style))
    console.print(table)
    for line in notes(data):
        console.print(f"  note: {line}", highlight=False, soft_wrap=True)


def rst(data):
    """The results as an RST list-table with the machine line (for the doc page)."""
    info = data["machine"]
    out = [
        f"Measured {info['date']} with ``{data['command'].strip()}``"
        f" ({data['runs']} runs per row, {data['heavy_runs']} for the largest; medians;"
        f" {data['workers']} workers per traversal).",
        "",
        f"Machine: {machine.one_line(info)}.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
    ]

    def add(cells):
        first = True
        for cell in cells:
            text = " / ".join(str(cell).splitlines()) or " "
            text = text.replace("*", "\\*").replace("|", "\\|")
            out.append(f"   {'* -' if first else '  -'} {text}")
            first = False

    add(HEADERS)
    for cells, _style in table_rows(data):
        add(cells)
    out.append("")
    for line in notes(data):
        out.append(f"- {line}")
    out.append("")
    out.extend(rst_sql_breakdown(data))
    return "\n".join(out)


def sql_breakdown_rows(data, case="flat-create"):
    """The largest row of ``case`` per database with per-kind SQL of both implementations."""
    chosen = {}
    for row in data["rows"]:
        if row["case"] == case and row.get("sql_by_kind_per_res"):
            if row["db"] not in chosen or row["params"]["n"] > chosen[row["db"]]["params"]["n"]:
                chosen[row["db"]] = row
    return list(chosen.values())


def rst_sql_breakdown(data, case="flat-create"):
    out = []
    for row in sql_breakdown_rows(data, case):
        stock = (row.get("stock") or {}).get("sql_by_kind_per_res") or {}
        mine = row["sql_by_kind_per_res"]
        kinds = sorted(set(mine) | set(stock), key=lambda k: -max(mine.get(k, 0), stock.get(k, 0)))
        kinds = [k for k in kinds if max(mine.get(k, 0), stock.get(k, 0)) >= 0.05]
        out += [f"SQL statements per resource by kind, {case} n={row['label']} on {row['db']}"
                f" (also per resource: nestedflow {row.get('checkouts_per_res', 0):.1f} pool"
                f" checkouts, {row.get('rollbacks_per_res', 0):.1f} rollbacks):", "",
                ".. list-table::", "   :header-rows: 1", "",
                "   * - statement", "     - nestedflow", "     - stock TaskFlow"]
        for kind in kinds:
            out += [f"   * - ``{kind}``", f"     - {mine.get(kind, 0):.2f}",
                    f"     - {stock.get(kind, 0):.2f}" if stock else "     - "]
        out.append("")
    return out


def hot_spots(path, limit=30, file=None):
    """Top functions by own time and by cumulative time of a (merged) profile."""
    file = file or sys.stdout
    stats = pstats.Stats(path, stream=file)
    stats.strip_dirs()
    print(f"== {os.path.basename(path)}: by own time", file=file)
    stats.sort_stats("tottime").print_stats(limit)
    print(f"== {os.path.basename(path)}: by cumulative time", file=file)
    stats.sort_stats("cumulative").print_stats(limit)


def main(argv=None):
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.report")
    parser.add_argument("json", nargs="?", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results.json"))
    parser.add_argument("--rst", action="store_true", help="print RST instead of the table")
    parser.add_argument("--profile", metavar="PROF", help="print the hot spots of a .prof file")
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args(argv)
    if args.profile:
        hot_spots(args.profile, args.limit)
        return 0
    with open(args.json) as handle:
        data = json.load(handle)
    if args.rst:
        print(rst(data))
    else:
        print_table(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
