"""What the numbers were measured on."""

import datetime
import importlib.metadata
import os
import platform
import sqlite3
import subprocess
import time

from bench import measure

PACKAGES = ("taskflow", "SQLAlchemy", "oslo.db", "psycopg2-binary", "futurist")


def _utcnow():
    # datetime.UTC needs Python 3.11; the project supports 3.10.
    return datetime.datetime.now(datetime.timezone.utc)  # noqa: UP017


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib():
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git(repo_root):
    def run(*args):
        result = subprocess.run(["git", "-C", repo_root, *args], capture_output=True,
                                text=True, check=False)
        return result.stdout.strip() if result.returncode == 0 else None

    commit = run("rev-parse", "--short", "HEAD")
    dirty = run("status", "--porcelain", "--untracked-files=no", "--", "nestedflow")
    return {"commit": commit, "engine_modified": bool(dirty)}


def python_speed():
    """Seconds for 10 million additions in a Python loop (best of 3).

    The absolute targets were set on one machine; on machines of the same
    description this has been seen to differ by more than 2x, and nestedflow
    is CPU-bound. Stock TaskFlow in the same run is the comparison that
    travels; this says how fast the machine was that day.
    """
    best = None
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(10_000_000):
            total += i
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return round(best, 2)


def describe(repo_root, pg_url=None):
    info = {
        "date": _utcnow().isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "packages": {name: _version(name) for name in PACKAGES},
        "git": _git(repo_root),
        "python_loop_s": python_speed(),
    }
    if pg_url:
        info["postgresql"] = measure.pg_version(pg_url)
    return info


def one_line(info):
    pkgs = info["packages"]
    text = (f"{info['cores']} cores {info['cpu']}, {info['ram_gib']} GiB RAM, {info['os']}; "
            f"Python {info['python']}, TaskFlow {pkgs.get('taskflow')}, "
            f"SQLAlchemy {pkgs.get('SQLAlchemy')}, oslo.db {pkgs.get('oslo.db')}, "
            f"SQLite {info['sqlite']}")
    if info.get("postgresql"):
        text += f", PostgreSQL {info['postgresql']}"
    if info.get("python_loop_s"):
        text += f"; Python speed: 10M-addition loop in {info['python_loop_s']} s"
    git = info.get("git") or {}
    if git.get("commit"):
        text += f"; nestedflow {git['commit']}"
        if git.get("engine_modified"):
            text += " (engine modified)"
    return text
