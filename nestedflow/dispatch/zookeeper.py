"""The ZooKeeper layout of a jobboard deployment, without TaskFlow.

``zookeeper://HOST:PORT[,HOST:PORT...]/ROOT`` names one deployment; the
paths under its root are described in :mod:`nestedflow.dispatch.jobboard`.
Reading them (``nestedflow conductor list``) needs only kazoo.
"""

import urllib.parse

from kazoo import client as kazoo_client
from kazoo.protocol import paths as k_paths
from oslo_serialization import jsonutils

from nestedflow import exceptions

SCHEME = "zookeeper"
DEFAULT_ROOT = "/nestedflow"
JOBS = "jobs"
TRASH = ".trash"
CONDUCTORS = "conductors"
RUNS = "runs"


class JobboardURL:
    """A parsed ``zookeeper://hosts/root`` URL."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url or "")
        if parts.scheme != SCHEME or not parts.netloc:
            raise exceptions.NestedflowError(
                f"jobboard URL {url!r}: expected zookeeper://HOST:PORT[,HOST:PORT...]/ROOT")
        self.hosts = parts.netloc
        root = parts.path.rstrip("/") or DEFAULT_ROOT
        if not k_paths.isabs(root) or "//" in root or any(
                segment in (".", "..") for segment in root.split("/")):
            raise exceptions.NestedflowError(f"jobboard URL {url!r}: bad root path {root!r}")
        self.root = root
        self.url = url

    def path(self, *parts):
        return k_paths.join(self.root, *parts)

    def __str__(self):
        return f"{SCHEME}://{self.hosts}{self.root}"


def make_client(url, session_timeout=10.0, logger=None):
    """A kazoo client for the deployment (not started)."""
    kwargs = {"logger": logger} if logger is not None else {}
    return kazoo_client.KazooClient(hosts=url.hosts, timeout=float(session_timeout), **kwargs)


def read_job(client, path):
    """(data dict, stat) of a job node; (None, None) once it is gone."""
    from kazoo import exceptions as k_exc

    try:
        raw, stat = client.get(path)
    except k_exc.NoNodeError:
        return None, None
    try:
        return jsonutils.loads(raw), stat
    except ValueError:
        return {}, stat


def describe(error):
    """``error`` as an operator reads it: kazoo's connection errors have
    no message, only a class name (ConnectionLoss, SessionExpiredError)."""
    text = str(error).strip().rstrip(":").strip()
    name = type(error).__name__
    described = f"{name}: {text}" if text else name
    # TaskFlow's JobFailure keeps what failed underneath as its cause.
    cause = getattr(error, "cause", None) or error.__cause__
    if cause is not None and cause is not error:
        inner = describe(cause)
        if inner not in described:
            described = f"{described} ({inner})"
    return described
