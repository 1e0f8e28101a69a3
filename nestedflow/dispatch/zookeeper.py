"""The ZooKeeper layout of a jobboard deployment, without TaskFlow.

``zookeeper://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/ROOT[?OPTIONS]``
names one deployment; the paths under its root are described in
:mod:`nestedflow.dispatch.impl_zookeeper`, the credentials, ACL and TLS options
in :mod:`nestedflow.dispatch.zk_security`. Reading them (``nestedflow
conductor list``) needs only kazoo.
"""

import urllib.parse

from kazoo import client as kazoo_client
from kazoo.protocol import paths as k_paths
from oslo_serialization import jsonutils

from nestedflow import exceptions
from nestedflow.dispatch import zk_security

SCHEME = "zookeeper"
DEFAULT_ROOT = "/nestedflow"
JOBS = "jobs"
TRASH = ".trash"
CONDUCTORS = "conductors"
RUNS = "runs"


class JobboardURL:
    """A parsed ``zookeeper://[USER:PASSWORD@]hosts/root[?options]`` URL.

    ``str()`` of it names the hosts and root only: it is what logs and
    error messages show, never the password.
    """

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url or "")
        userinfo, _, hosts = parts.netloc.rpartition("@")
        if parts.scheme != SCHEME or not hosts:
            raise exceptions.NestedflowError(
                f"jobboard URL {_redact(url)!r}: expected "
                "zookeeper://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/ROOT[?OPTIONS]")
        self.hosts = hosts
        root = parts.path.rstrip("/") or DEFAULT_ROOT
        if not k_paths.isabs(root) or "//" in root or any(
                segment in (".", "..") for segment in root.split("/")):
            raise exceptions.NestedflowError(
                f"jobboard URL {_redact(url)!r}: bad root path {root!r}")
        self.root = root
        self.url = url
        username, _, password = userinfo.partition(":")
        self.options = zk_security.LinkOptions(
            str(self), urllib.parse.unquote(username), urllib.parse.unquote(password),
            parts.query)

    def path(self, *parts):
        return k_paths.join(self.root, *parts)

    def __str__(self):
        return f"{SCHEME}://{self.hosts}{self.root}"


def _redact(url):
    parts = urllib.parse.urlsplit(url or "")
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


def make_client(url, session_timeout=10.0, logger=None):
    """A kazoo client for the deployment (not started), authenticating and
    setting ACLs and TLS as the URL asks."""
    kwargs = url.options.client_kwargs()
    if logger is not None:
        kwargs["logger"] = logger
    return kazoo_client.KazooClient(hosts=url.hosts, timeout=float(session_timeout), **kwargs)


def link_error(url, error):
    """The one line an operator reads when the client cannot start: a TLS
    problem found by a handshake of our own (kazoo only says "Connection
    time-out" after retrying it), else ``error`` itself."""
    problem = url.options.tls_problem(url.hosts)
    if problem:
        return exceptions.LinkSecurityError(f"ZooKeeper link {url}: {problem}")
    return None


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
