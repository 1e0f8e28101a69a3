"""TLS endpoints the security tests own: certificates made with openssl, a
ZooKeeper with a secureClientPort and SASL logins, a PostgreSQL server with
ssl=on, and a TLS-terminating proxy in front of the machine's RabbitMQ.

Each runs on a port and in a directory of its own, so stopping it touches
nobody else's tests.
"""

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import threading
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_BIN = os.environ.get("NESTEDFLOW_TEST_PG_BIN", "/usr/lib/postgresql/15/bin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _signed(directory, name, ca, subject, extensions):
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", subject, cwd=directory)
    (directory / f"{name}.ext").write_text(extensions)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
             "-extfile", f"{name}.ext", cwd=directory)


def make_certs(directory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate it
    signed, and a second CA that signed neither (the "wrong CA")."""
    directory.mkdir(parents=True, exist_ok=True)
    for ca in ("ca", "wrong-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key",
                 "-out", f"{ca}.pem", "-days", "2", "-subj", f"/CN=nestedflow-test-{ca}",
                 cwd=directory)
    _signed(directory, "server", "ca", "/CN=127.0.0.1",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _signed(directory, "client", "ca", "/CN=nestedflow-conductor",
            "extendedKeyUsage=clientAuth\n")
    # ZooKeeper's PEM key store: the key and its certificate in one file.
    (directory / "server.pem").write_text(
        (directory / "server.key").read_text() + (directory / "server.crt").read_text())
    return types.SimpleNamespace(**{
        name.replace("-", "_").replace(".", "_"): str(directory / name)
        for name in ("ca.pem", "wrong-ca.pem", "server.crt", "server.key", "server.pem",
                     "client.crt", "client.key")})


# -- ZooKeeper ----------------------------------------------------------------


class SecureZooKeeper:
    """tools/zookeeper.sh with a secureClientPort (Netty, PEM key and trust
    stores; client certificates wanted, not needed) and SASL DIGEST-MD5
    logins from a JAAS file. Its plain port stays for the script's own
    four-letter-word readiness check."""

    def __init__(self, directory, certs, users):
        self.port = free_port()
        self.secure_port = free_port()
        directory.mkdir(parents=True, exist_ok=True)
        jaas = directory / "jaas.conf"
        logins = "\n".join(f'  user_{user}="{password}"' for user, password in users.items())
        jaas.write_text("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule "
                        f"required\n{logins};\n}};\n")
        extra = directory / "secure.cfg"
        extra.write_text(
            "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
            f"secureClientPort={self.secure_port}\n"
            f"ssl.keyStore.location={certs.server_pem}\nssl.keyStore.type=PEM\n"
            f"ssl.trustStore.location={certs.ca_pem}\nssl.trustStore.type=PEM\n"
            "ssl.clientAuth=want\n"
            "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n")
        self.env = dict(os.environ, NESTEDFLOW_ZK_PORT=str(self.port),
                        NESTEDFLOW_ZK_DIR=str(directory / "zk"),
                        NESTEDFLOW_ZK_EXTRA_CFG=str(extra),
                        NESTEDFLOW_ZK_JAVA_OPTS=(
                            f"-Xmx128m -Djava.security.auth.login.config={jaas}"))
        self.secure_hosts = f"127.0.0.1:{self.secure_port}"

    def _run(self, command):
        subprocess.run([os.path.join(ROOT, "tools", "zookeeper.sh"), command], env=self.env,
                       check=True, capture_output=True, timeout=90)

    def start(self):
        self._run("start")

    def stop(self):
        self._run("stop")


# -- PostgreSQL ---------------------------------------------------------------


class SslPostgres:
    """An ``initdb`` cluster of the test's own with ssl=on on its own port
    (trust authentication: what is tested is the link, not the login)."""

    def __init__(self, certs):
        import pathlib
        import tempfile

        self.port = free_port()
        # Not under pytest's tmp_path: its parents are root's alone, and the
        # server runs as the postgres user when the tests run as root
        # (initdb refuses to run as root).
        directory = self.dir = pathlib.Path(tempfile.mkdtemp(prefix="nestedflow-pg-tls-"))
        self.data = directory / "data"
        self._as = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            owner = pwd.getpwnam("postgres")
        for name in ("server.crt", "server.key"):
            shutil.copy(getattr(certs, name.replace(".", "_")), directory / name)
            os.chmod(directory / name, 0o600)
            if self._as:
                os.chown(directory / name, owner.pw_uid, owner.pw_gid)
        if self._as:
            os.chown(directory, owner.pw_uid, owner.pw_gid)

    def _run(self, *args):
        subprocess.run([*self._as, *args], check=True, capture_output=True, timeout=120)

    def start(self):
        self._run(f"{PG_BIN}/initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                       f"unix_socket_directories = '{self.dir}'\nssl = on\n"
                       f"ssl_cert_file = '{self.dir}/server.crt'\n"
                       f"ssl_key_file = '{self.dir}/server.key'\nfsync = off\n"
                       "shared_buffers = 64MB\nmax_connections = 100\n")
        self._run(f"{PG_BIN}/pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")

    def stop(self):
        with contextlib.suppress(subprocess.SubprocessError):
            self._run(f"{PG_BIN}/pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


# -- a TLS-terminating proxy ----------------------------------------------------


class TlsProxy:
    """Accepts TLS on a port of its own and relays the plain bytes to
    ``target``: a TLS endpoint in front of the machine's RabbitMQ, proving
    the client side of the link (what nestedflow configures)."""

    def __init__(self, target, certfile=None, keyfile=None):
        import ssl

        self.target = target
        # Without a certificate: a plain relay, the same path without TLS
        # (the side-by-side benchmark's baseline).
        self.context = None
        if certfile:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(certfile, keyfile)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.handshakes = 0
        self.failed_handshakes = 0
        self._closed = threading.Event()
        self._conns = []
        threading.Thread(target=self._accept, daemon=True, name="tls-proxy").start()

    def _accept(self):
        while not self._closed.is_set():
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            tls = self.context.wrap_socket(raw, server_side=True) if self.context else raw
        except OSError:
            self.failed_handshakes += 1
            raw.close()
            return
        self.handshakes += 1
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            tls.close()
            return
        upstream.settimeout(None)
        self._conns += [tls, upstream]
        threading.Thread(target=self._pump, args=(upstream, tls), daemon=True).start()
        self._pump(tls, upstream)

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self):
        self._closed.set()
        self.sock.close()
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.close()
