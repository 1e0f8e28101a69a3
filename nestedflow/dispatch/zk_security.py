"""Who may touch a deployment's znodes, and how the link to ZooKeeper is secured.

Everything is read from the jobboard URL, so that the engine posting jobs,
every conductor and ``nestedflow conductor list`` share one setting::

    zookeeper://USER:PASSWORD@HOST:PORT[,HOST:PORT...]/ROOT?OPTION=VALUE&...

The user information and the TLS options are the ones tooz's ZooKeeper
driver (``tooz.drivers.zookeeper.KazooDriver._make_client``) and TaskFlow's
``taskflow.utils.kazoo_utils.make_client`` read, passed on to kazoo's
``KazooClient`` under kazoo's own names:

* ``USER:PASSWORD@`` -- ``digest`` authentication (``auth_data``), or with
  ``sasl_mechanism=DIGEST-MD5`` SASL authentication (``sasl_options``);
* ``acl=creator`` (the default once credentials are given): kazoo's
  ``CREATOR_ALL_ACL``, every permission for the identity that created the
  node and nobody else; or an explicit list ``SCHEME:ID:PERMS[,...]``
  (PERMS from ``rwcda``, e.g. ``sasl:nestedflow:rwcda``), set as kazoo's
  ``default_acl`` and so on every node nestedflow and TaskFlow create;
* ``use_ssl``, ``ca``, ``certfile``, ``keyfile``, ``keyfile_password``,
  ``verify_certs``, ``check_hostname`` -- TLS (a server's
  ``secureClientPort``).
"""

import os
import urllib.parse

from kazoo import security as k_security
from oslo_utils import strutils

from nestedflow import exceptions
from nestedflow.links import tls

SASL_MECHANISMS = ("DIGEST-MD5",)
CREATOR = "creator"
FILES = ("ca", "certfile", "keyfile")
BOOLEANS = ("use_ssl", "verify_certs", "check_hostname")
OPTIONS = ("sasl_mechanism", "acl", "keyfile_password") + FILES + BOOLEANS
PERMISSIONS = {"r": "read", "w": "write", "c": "create", "d": "delete", "a": "admin"}
ZK_PORT = 2181


def _acl_entry(url, text):
    scheme, _, rest = text.partition(":")
    ident, _, perms = rest.rpartition(":")
    if not scheme or not ident or not perms or any(p not in PERMISSIONS for p in perms):
        raise exceptions.NestedflowError(
            f"jobboard URL {url}: bad acl entry {text!r}: expected SCHEME:ID:PERMS "
            "with PERMS from rwcda (e.g. sasl:nestedflow:rwcda)")
    return k_security.make_acl(scheme, ident, **{PERMISSIONS[p]: True for p in perms})


class LinkOptions:
    """The authentication, ACL and TLS settings of one jobboard URL."""

    def __init__(self, shown, username, password, query):
        params = urllib.parse.parse_qs(query or "", keep_blank_values=True)
        unknown = sorted(set(params) - set(OPTIONS))
        if unknown:
            raise exceptions.NestedflowError(
                f"jobboard URL {shown}: unknown option {unknown[0]!r} "
                f"(known: {', '.join(OPTIONS)})")
        value = {key: values[-1] for key, values in params.items()}
        flags = {}
        for key in BOOLEANS:
            try:
                flags[key] = strutils.bool_from_string(
                    value.get(key, "true" if key == "verify_certs" else "false"), strict=True)
            except ValueError:
                raise exceptions.NestedflowError(
                    f"jobboard URL {shown}: {key}={value[key]!r} is not a boolean") from None
        for key in FILES:
            if value.get(key) and not os.path.isfile(value[key]):
                raise exceptions.NestedflowError(
                    f"jobboard URL {shown}: {key} file {value[key]!r} does not exist")
        if any(value.get(k) for k in FILES + ("keyfile_password",)) and not flags["use_ssl"]:
            raise exceptions.NestedflowError(
                f"jobboard URL {shown}: ca/certfile/keyfile are given but use_ssl is not true")
        self.username = username or None
        self.password = password or ""
        self.sasl_mechanism = value.get("sasl_mechanism") or None
        if self.sasl_mechanism and self.sasl_mechanism.upper() not in SASL_MECHANISMS:
            raise exceptions.NestedflowError(
                f"jobboard URL {shown}: sasl_mechanism {self.sasl_mechanism!r} is not "
                f"supported (supported: {', '.join(SASL_MECHANISMS)})")
        if self.sasl_mechanism and not self.username:
            raise exceptions.NestedflowError(
                f"jobboard URL {shown}: sasl_mechanism needs USER:PASSWORD@ in the URL")
        acl = value.get("acl") or (CREATOR if self.username else None)
        if acl == CREATOR and not self.username:
            raise exceptions.NestedflowError(
                f"jobboard URL {shown}: acl=creator needs USER:PASSWORD@ in the URL")
        if acl is None:
            self.acl = None
        elif acl == CREATOR:
            self.acl = list(k_security.CREATOR_ALL_ACL)
        else:
            self.acl = [_acl_entry(shown, entry) for entry in acl.split(",") if entry]
        self.use_ssl = flags["use_ssl"]
        self.verify_certs = flags["verify_certs"]
        self.check_hostname = flags["check_hostname"]
        self.ca = value.get("ca") or None
        self.certfile = value.get("certfile") or None
        self.keyfile = value.get("keyfile") or None
        self.keyfile_password = value.get("keyfile_password") or None

    @property
    def authenticated(self):
        return self.username is not None

    def client_kwargs(self):
        """KazooClient's keyword arguments for these settings."""
        kwargs = {}
        if self.sasl_mechanism:
            kwargs["sasl_options"] = {"mechanism": self.sasl_mechanism.upper(),
                                      "username": self.username, "password": self.password}
        elif self.username:
            kwargs["auth_data"] = [("digest", f"{self.username}:{self.password}")]
        if self.acl:
            kwargs["default_acl"] = list(self.acl)
        if self.use_ssl:
            kwargs.update(use_ssl=True, ca=self.ca, certfile=self.certfile,
                          keyfile=self.keyfile, keyfile_password=self.keyfile_password,
                          verify_certs=self.verify_certs)
            if self.check_hostname:
                # Only asked for when wanted: kazoo before 2.10 has no such argument.
                kwargs["check_hostname"] = True
        return kwargs

    def tls_problem(self, hosts, timeout=5.0):
        """Why a TLS handshake with the first server refusing one fails (None
        if none does, or TLS is off)."""
        if not self.use_ssl:
            return None
        context = tls.client_context(self.ca, self.certfile, self.keyfile,
                                     self.keyfile_password, self.verify_certs,
                                     self.check_hostname)
        for host, port in tls.split_hosts(hosts, ZK_PORT):
            problem = tls.handshake_problem(host, port, context, timeout)
            if problem:
                return f"{host}:{port}: {problem} (ca={self.ca})"
        return None


def open_acl(acls):
    """Whether a node's ACL lets anyone (``world:anyone``) in."""
    return any(acl.id.scheme == "world" for acl in acls or ())


def root_report(client, url):
    """A warning about the root's ACL for ``nestedflow conductor list`` (None: fine).

    A root created by a version without ACLs, or by a deployment without
    credentials, stays open to anyone who reaches ZooKeeper even after the
    URL gets credentials: kazoo's ``default_acl`` applies only to nodes
    created from then on.
    """
    from kazoo import exceptions as k_exc

    try:
        acls, _ = client.get_acls(url.root)
    except (k_exc.NoNodeError, k_exc.NoAuthError):
        return None  # no root yet, or one closed to this client: not open
    if not open_acl(acls):
        return None
    if not url.options.authenticated:
        return (f"the jobboard root {url.root} is open to anyone who can reach "
                f"ZooKeeper ({url.hosts}): anyone there can read job payloads, delete "
                "claims and post jobs. Give the URL credentials (zookeeper://USER:"
                "PASSWORD@HOST/ROOT) and secure the existing nodes; see "
                "doc/source/security.rst")
    fix = (f"addauth digest {url.options.username}:PASSWORD" if not url.options.sasl_mechanism
           else "connect with the deployment's SASL login")
    return (f"the jobboard root {url.root} was created without ACLs (an older "
            "version, or a URL without credentials): it is still open to anyone who "
            f"can reach ZooKeeper. Fix: in zkCli.sh -server {url.hosts.split(',')[0]}, "
            f"{fix}; then setAcl -R {url.root} auth::cdrwa")
