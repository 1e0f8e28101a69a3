"""What ``nestedflow conductor list`` shows: live conductors and their jobs.

Read straight from ZooKeeper (the conductors' ephemeral nodes and the
jobboard's claim nodes), so it needs no database and shows exactly what
the conductors themselves see.
"""

import contextlib
import datetime
import json
import logging

from kazoo import exceptions as k_exc

from nestedflow.dispatch import zk_security
from nestedflow.dispatch import zookeeper as jobboard


def _read_json(client, path):
    try:
        raw, _ = client.get(path)
    except k_exc.NoNodeError:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {}


def _children(client, path):
    try:
        return sorted(client.get_children(path))
    except k_exc.NoNodeError:
        return []


def _when(timestamp):
    if not timestamp:
        return None
    return datetime.datetime.fromtimestamp(timestamp).isoformat(sep=" ", timespec="seconds")


def _quiet_logger():
    # A one-shot command reports an unreachable server once, as its error;
    # kazoo would log every reconnection attempt on stderr.
    logger = logging.getLogger("nestedflow.conductor.listing.kazoo")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


def describe(jobboard_url, timeout=5.0):
    """{"conductors": [...], "unclaimed": [...], "orphaned": [...],
    "warnings": [...]} (warnings: an open root, see zk_security.root_report)."""
    url = jobboard.JobboardURL(jobboard_url)
    client = jobboard.make_client(url, logger=_quiet_logger())
    try:
        client.start(timeout=timeout)
    except Exception as error:
        with contextlib.suppress(Exception):
            client.stop()
            client.close()
        raise (jobboard.link_error(url, error) or error) from error
    try:
        conductors = []
        by_who = {}
        for name in _children(client, url.path(jobboard.CONDUCTORS)):
            info = _read_json(client, url.path(jobboard.CONDUCTORS, name))
            if info is None:
                continue
            entry = {"name": name, "host": info.get("host"), "pid": info.get("pid"),
                     "started_at": _when(info.get("started_at")),
                     "job_slots": info.get("job_slots"), "jobs": []}
            conductors.append(entry)
            by_who[info.get("who")] = entry
        runs = {}
        for owner in _children(client, url.path(jobboard.RUNS)):
            info = _read_json(client, url.path(jobboard.RUNS, owner)) or {}
            runs[info.get("job")] = owner
        unclaimed, orphaned = [], []
        jobs_path = url.path(jobboard.JOBS)
        for child in _children(client, jobs_path):
            if child.endswith(".lock") or not child.startswith("job"):
                continue
            data = _read_json(client, f"{jobs_path}/{child}")
            if data is None:
                continue
            details = data.get("details") or {}
            kwargs = details.get("kwargs") or {}
            job = {"job": data.get("uuid"), "name": data.get("name"),
                   "stack_id": kwargs.get("stack_id"), "action": kwargs.get("action"),
                   "traversal_id": kwargs.get("traversal_id"),
                   "attempts": details.get("attempts", 0),
                   "run": runs.get(data.get("uuid"))}
            lock = _read_json(client, f"{jobs_path}/{child}.lock")
            if lock is None:
                unclaimed.append(job)
            elif lock.get("owner") in by_who:
                by_who[lock["owner"]]["jobs"].append(job)
            else:
                orphaned.append({**job, "owner": lock.get("owner")})
        warning = zk_security.root_report(client, url)
        return {"jobboard": str(url), "conductors": conductors, "unclaimed": unclaimed,
                "orphaned": orphaned, "warnings": [warning] if warning else []}
    finally:
        with contextlib.suppress(Exception):
            client.stop()
            client.close()
