"""How long the ``nestedflow`` command takes, process start to exit.

    python -m bench.cli_startup [--runs 10] [--source DIR ...]

For each ``--source`` (a checkout of nestedflow; default: this one) it
times ``nestedflow --help`` and ``nestedflow stack list`` on a small SQLite
database (three stacks of five resources, created beforehand by the same
checkout), each ``--runs`` times in a fresh process, and prints the
medians side by side. A checkout's command is run as ``python -S -m`` of
its command-line module with the checkout, then this virtualenv's
site-packages, on ``PYTHONPATH`` -- so an older checkout (before the cliff
command line: ``nestedflow.cmd.cli``) runs with the same libraries, and
the editable install's import hook (a ``.pth`` file, skipped by ``-S``)
does not redirect it to this checkout. Every source is run the same way.
Targets (issue 23): ``--help`` under 0.3 s, ``stack list`` under 0.5 s.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(REPO_ROOT, "examples", "webapp.yaml")
TARGETS = {"--help": 0.3, "stack list": 0.5}


def _module(source):
    if os.path.exists(os.path.join(source, "nestedflow", "cmd", "shell.py")):
        return "nestedflow.cmd.shell"
    return "nestedflow.cmd.cli"


def _site_packages():
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _env(source, db_url):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([source, _site_packages()]),
               NESTEDFLOW_DB_URL=db_url, COLUMNS="120")
    env.pop("NESTEDFLOW_JOBBOARD_URL", None)
    return env


def _cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(source, db_url, args):
    """``(wall, cpu)`` seconds of one run, process start to exit."""
    cmd = [sys.executable, "-S", "-m", _module(source), *args]
    cpu, started = _cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=source, env=_env(source, db_url), capture_output=True,
                          text=True, timeout=300)
    elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({source}):\n{proc.stderr}")
    return elapsed, cpu


def prepare(source, workdir, index):
    """A small SQLite database made by ``source`` itself; returns its URL."""
    db_url = f"sqlite:///{workdir}/source{index}.sqlite"
    for i in range(3):
        _run(source, db_url, ["stack", "create", f"s{i}", "-t", TEMPLATE, "--wait"])
    _run(source, db_url, ["stack", "list"])  # warm the page cache and .pyc files
    return db_url


def measure(sources, runs, workdir):
    """``{source: {command: (median wall, median CPU) seconds}}``; the
    sources' runs alternate, so a machine getting busier or quieter affects
    them alike. CPU time (user + system) is the steadier number on a busy
    machine: it does not count waiting for a core."""
    dbs = {source: prepare(source, workdir, i) for i, source in enumerate(sources)}
    times = {source: {label: [] for label in TARGETS} for source in sources}
    for _ in range(runs):
        for label, args in (("--help", ["--help"]), ("stack list", ["stack", "list"])):
            for source in sources:
                times[source][label].append(_run(source, dbs[source], args))
    return {source: {label: (statistics.median(v[0] for v in values),
                             statistics.median(v[1] for v in values))
                     for label, values in by_label.items()}
            for source, by_label in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.cli_startup",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command (median)")
    parser.add_argument("--source", action="append",
                        help="a nestedflow checkout to measure; may be repeated "
                        "(default: this one)")
    args = parser.parse_args(argv)
    sources = [os.path.abspath(s) for s in (args.source or [REPO_ROOT])]
    with tempfile.TemporaryDirectory(prefix="nf-cli-bench-") as workdir:
        rows = measure(sources, args.runs, workdir)
    print(f"median of {args.runs} runs, process start to exit, seconds: wall (CPU)")
    print(f"{'command':<12}" + "".join(f" {os.path.basename(s)[:22]:>22}" for s in sources)
          + "  target")
    for label, target in TARGETS.items():
        cells = "".join(f" {rows[s][label][0]:>13.3f} ({rows[s][label][1]:.3f})"
                        for s in sources)
        print(f"{label:<12}{cells}  < {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
