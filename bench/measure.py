"""Counting SQL, peak memory, fresh databases and threaded profiling for one case run."""

import cProfile
import functools
import os
import pstats
import re
import resource
import shutil
import tempfile
import threading
import time

import sqlalchemy as sa

DEFAULT_PG_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/nestedflow_bench"


_TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", re.IGNORECASE)
#: nestedflow's prepared statements are named for their verb and table
#: (nestedflow.db.precompiled): ``EXECUTE nf_with_resources_<digest> (...)``.
_PREPARED = re.compile(r"EXECUTE\s+nf_([a-z]+)_(\w+)_[0-9a-f]{12}\b")


@functools.lru_cache(maxsize=4096)
def statement_kind(statement):
    """``"UPDATE resource"``, ``"SELECT atomdetails"``, ``"BEGIN"``...: verb and first table.

    Cached: the statements repeat, and the counting must not cost the
    measured engines much.
    """
    prepared = _PREPARED.match(statement)
    if prepared:  # counted as the statement it runs
        return f"{prepared.group(1).upper()} {prepared.group(2)}"
    words = statement.split(None, 1)
    verb = words[0].upper() if words else "?"
    match = _TABLE.search(statement)
    return f"{verb} {match.group(1)}" if match and verb != "BEGIN" else verb


class SqlCounter:
    """Statements, commits and connection use on every SQLAlchemy engine of this process.

    Listening on the ``Engine`` and ``Pool`` classes covers nestedflow's
    oslo.db engine (``Database._facade.writer.get_engine()``), the TaskFlow
    backend sharing it, the stock TaskFlow backend's own ``.engine``, and
    any engine a future change adds, without reaching into their internals.
    Pool checkouts matter on their own: oslo.db pings (``SELECT 1``, not
    seen as a statement) every connection it checks out.
    """

    FIELDS = ("statements", "commits", "rollbacks", "checkouts", "connects")

    def __init__(self):
        self._lock = threading.Lock()
        self._installed = False
        self.reset()

    def install(self):
        if not self._installed:
            sa.event.listen(sa.engine.Engine, "before_cursor_execute", self._on_execute)
            sa.event.listen(sa.engine.Engine, "commit", self._bump("commits"))
            sa.event.listen(sa.engine.Engine, "rollback", self._bump("rollbacks"))
            sa.event.listen(sa.pool.Pool, "checkout", self._bump("checkouts"))
            sa.event.listen(sa.pool.Pool, "connect", self._bump("connects"))
            self._installed = True
        return self

    def _on_execute(self, conn, cursor, statement, *args, **kwargs):
        kind = statement_kind(statement)
        with self._lock:
            self._counts["statements"] += 1
            self._kinds[kind] = self._kinds.get(kind, 0) + 1

    def _bump(self, field):
        def listener(*args, **kwargs):
            with self._lock:
                self._counts[field] += 1
        return listener

    def reset(self):
        with self._lock:
            self._counts = dict.fromkeys(self.FIELDS, 0)
            self._kinds = {}

    def snapshot(self):
        with self._lock:
            kinds = sorted(self._kinds.items(), key=lambda item: -item[1])
            return {**self._counts, "sql_by_kind": dict(kinds)}


def peak_rss_mb():
    """Peak RSS of this process and of the largest child it waited for (Linux: KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return own, children


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        self.elapsed = None
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


# -- databases ---------------------------------------------------------------

def fresh_database(kind, pg_url=DEFAULT_PG_URL):
    """A URL to an empty database of ``kind`` and a cleanup callable.

    SQLite: a new file in a temporary directory. PostgreSQL: the bench
    database (created if missing) with its ``public`` schema dropped and
    re-created, so every run starts from the same empty state.
    """
    if kind == "sqlite":
        tmp = tempfile.mkdtemp(prefix="nestedflow-bench-")
        url = "sqlite:///" + os.path.join(tmp, "bench.sqlite")
        return url, lambda: shutil.rmtree(tmp, ignore_errors=True)
    if kind == "postgresql":
        ensure_pg_database(pg_url)
        engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
                conn.exec_driver_sql("CREATE SCHEMA public")
        finally:
            engine.dispose()
        return pg_url, lambda: None
    raise ValueError(f"unknown database kind {kind!r}")


def ensure_pg_database(pg_url):
    url = sa.engine.make_url(pg_url)
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            exists = conn.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :name"),
                {"name": url.database},
            ).scalar()
            if not exists:
                conn.exec_driver_sql(f'CREATE DATABASE "{url.database}"')
    finally:
        admin.dispose()


def pg_version(pg_url):
    try:
        ensure_pg_database(pg_url)
        engine = sa.create_engine(pg_url)
        try:
            with engine.connect() as conn:
                return conn.exec_driver_sql("SHOW server_version").scalar()
        finally:
            engine.dispose()
    except Exception as error:  # reported, not fatal
        return f"unavailable ({type(error).__name__})"


# -- profiling ---------------------------------------------------------------

class ThreadedProfile:
    """cProfile in every thread started (or already profiled) while active.

    The engine runs resources in pool threads, which a plain cProfile in
    the main thread never sees; each thread gets its own profiler, merged
    at the end. Times are per-thread wall times, so the sum over threads
    shows where the workers spend (or wait for) their time.
    """

    def __init__(self):
        self._profiles = []
        self._lock = threading.Lock()
        self._active = False

    def _bootstrap(self, *args):
        # Runs as the first profile event of a new thread: swap in a real profiler.
        if not self._active:
            return
        profile = cProfile.Profile()
        with self._lock:
            self._profiles.append(profile)
        profile.enable()

    def __enter__(self):
        self._active = True
        threading.setprofile(self._bootstrap)
        main = cProfile.Profile()
        self._profiles.append(main)
        main.enable()
        return self

    def __exit__(self, *exc):
        self._active = False
        threading.setprofile(None)
        self._profiles[0].disable()

    def dump(self, path):
        with self._lock:
            profiles = list(self._profiles)
        stats = pstats.Stats(profiles[0])
        for profile in profiles[1:]:
            try:
                stats.add(profile)
            except (TypeError, ValueError):
                continue  # a thread that never recorded a call
        stats.dump_stats(path)
        return path
