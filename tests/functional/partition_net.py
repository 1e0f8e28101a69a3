"""A small network of the partition tests' own, and servers to put behind it.

* :class:`Network`: one network namespace per conductor (``ip netns``),
  each reaching ZooKeeper, PostgreSQL and RabbitMQ through a link of its
  own (a TAP device in the namespace, its peer on the host, joined by
  ``partition_wire.py``), so that each link can be cut (``ip link set
  down``), delayed or made lossy on its own. Needs root (CI runs as root).
* :class:`OwnPostgres`: a PostgreSQL server of the test's own (``initdb``
  in a temporary directory, its own port, listening on every address) to
  stop and start mid-run; the machine's listens on 127.0.0.1 only.
* :class:`Ensemble`: a three-node ZooKeeper ensemble of the test's own
  (java run directly, as tools/zookeeper.sh does) to take its leader or
  its quorum away.

Everything is removed by ``close()``, also after a failed test; a run killed
before that leaves namespaces named ``nfpart<PID>-...``, which the next run
removes (with any process left in them) when that pid is gone.
"""

import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

WIRE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "partition_wire.py")
SERVICES = ("zk", "pg", "mq")
ZK_JAR = os.environ.get("NESTEDFLOW_ZK_JAR", "/usr/share/java/zookeeper.jar")
SLF4J = "/usr/share/java/slf4j-simple.jar"
RABBIT = ("127.0.0.1", 5672)


def sh(*cmd, check=True):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if check and result.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def four_letter(port, word, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=2) as s:
            s.sendall(word.encode())
            chunks = []
            while chunk := s.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode()
    except OSError:
        return ""


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_namespaces():
    """Namespaces (and their processes) left by a partition run that died."""
    for line in sh("ip", "netns", "list", check=False).splitlines():
        name = line.split()[0] if line.split() else ""
        match = re.match(r"nfpart(\d+)-", name)
        if not match or _pid_alive(int(match.group(1))):
            continue
        for pid in sh("ip", "netns", "pids", name, check=False).split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        sh("ip", "netns", "del", name, check=False)


class Link:
    def __init__(self, conductor, service, index, octet, tag):
        self.conductor, self.service = conductor, service
        self.ns_tap = f"nf{tag}{index:02d}n"
        self.host_tap = f"nf{tag}{index:02d}h"
        self.host_ip = f"10.{octet}.{index}.1"
        self.ns_ip = f"10.{octet}.{index}.2"

    def __repr__(self):
        return f"{self.conductor}-{self.service}"


class Network:
    """Namespaces for ``conductors``, three links each; a relay for RabbitMQ."""

    def __init__(self, conductors):
        if os.geteuid() != 0:
            raise RuntimeError("the partition tests make network namespaces: run them as root")
        sweep_stale_namespaces()
        self.tag = f"{random.randrange(16 ** 4):04x}"
        used = sh("ip", "-4", "addr")
        self.octet = next(o for o in random.sample(range(100, 200), 100)
                          if f"10.{o}." not in used)
        self.namespaces = {c: f"nfpart{os.getpid()}-{c}" for c in conductors}
        self.links = {}
        for ci, conductor in enumerate(conductors):
            for si, service in enumerate(SERVICES):
                index = ci * len(SERVICES) + si
                self.links[conductor, service] = Link(conductor, service, index, self.octet,
                                                      self.tag)
        self.rabbit_port = free_port()
        self.wire = None
        self.faults = 0
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self):
        cmd = [sys.executable, WIRE, "--relay", f"{self.rabbit_port}:{RABBIT[0]}:{RABBIT[1]}"]
        for link in self.links.values():
            cmd += ["--link", f"{link.ns_tap}:{link.host_tap}"]
        self.wire = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        if self.wire.stdout.readline().strip() != "ready":
            raise RuntimeError("partition_wire.py did not start")
        for namespace in self.namespaces.values():
            sh("ip", "netns", "add", namespace)
            sh("ip", "-n", namespace, "link", "set", "lo", "up")
        for link in self.links.values():
            namespace = self.namespaces[link.conductor]
            sh("ip", "link", "set", link.ns_tap, "netns", namespace)
            sh("ip", "-n", namespace, "addr", "add", f"{link.ns_ip}/24", "dev", link.ns_tap)
            sh("ip", "-n", namespace, "link", "set", link.ns_tap, "up")
            sh("ip", "addr", "add", f"{link.host_ip}/24", "dev", link.host_tap)
            sh("ip", "link", "set", link.host_tap, "up")

    def prefix(self, conductor):
        """The command prefix running a program on ``conductor``'s host."""
        return ["ip", "netns", "exec", self.namespaces[conductor]]

    def address(self, conductor, service):
        """The address ``conductor`` reaches ``service`` at."""
        return self.links[conductor, service].host_ip

    # -- faults ---------------------------------------------------------------

    def _selected(self, conductors, services):
        return [link for (c, s), link in self.links.items()
                if (conductors is None or c in conductors) and (services is None or s in services)]

    def cut(self, conductors=None, services=None):
        """Take the links down: frames either way are lost, as in a partition."""
        for link in self._selected(conductors, services):
            sh("ip", "link", "set", link.host_tap, "down")
            self.faults += 1

    def heal(self, conductors=None, services=None):
        for link in self._selected(conductors, services):
            sh("ip", "link", "set", link.host_tap, "up")
            # Up again, the host re-adds the link's route with its address.
            sh("ip", "addr", "replace", f"{link.host_ip}/24", "dev", link.host_tap)

    def degrade(self, delay, loss):
        """``delay`` seconds on every frame a conductor sends, ``loss`` of every
        frame either way, on every link (0, 0 heals)."""
        self.wire.stdin.write(f"set {delay} {loss}\n")
        self.wire.stdin.flush()
        if delay or loss:
            self.faults += len(self.links)

    def reset(self):
        self.degrade(0, 0)
        self.heal()

    def close(self):
        for namespace in getattr(self, "namespaces", {}).values():
            for pid in sh("ip", "netns", "pids", namespace, check=False).split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            sh("ip", "netns", "del", namespace, check=False)
        if self.wire is not None:
            # Its TAP devices go with it.
            self.wire.stdin.close()
            try:
                self.wire.wait(10)
            except subprocess.TimeoutExpired:
                self.wire.kill()
                self.wire.wait()


class OwnPostgres:
    """A PostgreSQL server in a temporary directory, run as the postgres user."""

    USER = "postgres"

    def __init__(self):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="nfpart-pg-")
        self.data = os.path.join(self.dir, "data")
        shutil.chown(self.dir, self.USER)
        self._as_user("initdb", "-D", self.data, "-A", "trust", "-U", "postgres",
                      "--no-sync", "-E", "UTF8")
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write("host all all 0.0.0.0/0 trust\n")
        self.start()

    def _as_user(self, *cmd):
        # initdb and postgres refuse to run as root.
        return sh("runuser", "-u", self.USER, "--", *cmd)

    def start(self):
        options = (f"-p {self.port} -c listen_addresses='*' -c unix_socket_directories={self.dir}"
                   # fsync=off survives the server's crash (the OS keeps the
                   # writes), not synchronous_commit=off: stop() is a crash.
                   " -c fsync=off"
                   " -c max_connections=200")
        self._as_user("pg_ctl", "-D", self.data, "-o", options, "-l",
                      os.path.join(self.dir, "postgres.log"), "-w", "-t", "60", "start")

    def ensure_running(self):
        status = subprocess.run(["runuser", "-u", self.USER, "--", "pg_ctl", "-D", self.data,
                                 "status"], capture_output=True)
        if status.returncode:
            self.start()

    def stop(self, mode="immediate"):
        """``immediate``: as if the server crashed (no checkpoint, sessions cut)."""
        self._as_user("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def url(self, database="postgres", host="127.0.0.1"):
        return f"postgresql+psycopg2://postgres@{host}:{self.port}/{database}"

    def create_database(self, name):
        import sqlalchemy as sa

        admin = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
        finally:
            admin.dispose()

    def close(self):
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Ensemble:
    """Three ZooKeeper servers on 127.0.0.1 (their clients on every address)."""

    def __init__(self, size=3):
        self.dir = tempfile.mkdtemp(prefix="nfpart-zk-")
        self.ids = list(range(1, size + 1))
        self.client_ports = {i: free_port() for i in self.ids}
        peers = {i: (free_port(), free_port()) for i in self.ids}
        self.processes = {}
        for i in self.ids:
            data = os.path.join(self.dir, f"zk{i}")
            os.makedirs(data)
            with open(os.path.join(data, "myid"), "w") as f:
                f.write(f"{i}\n")
            lines = [
                # 1 s ticks: sessions of 2-20 s, elections in a few seconds.
                "tickTime=1000", "initLimit=10", "syncLimit=3", f"dataDir={data}",
                f"clientPort={self.client_ports[i]}", "clientPortAddress=0.0.0.0",
                "maxClientCnxns=0", "admin.enableServer=false", "forceSync=no",
                # envi: the taskflow jobboard reads the server version with it.
                "4lw.commands.whitelist=srvr,envi,ruok,stat,mntr",
                *(f"server.{j}=127.0.0.1:{q}:{e}" for j, (q, e) in peers.items()),
            ]
            with open(os.path.join(data, "zoo.cfg"), "w") as f:
                f.write("\n".join(lines) + "\n")
        try:
            for i in self.ids:
                self.start(i, wait=False)
            self.wait_serving()
        except BaseException:
            self.close()
            raise

    def start(self, i, wait=True):
        data = os.path.join(self.dir, f"zk{i}")
        classpath = f"{ZK_JAR}:{SLF4J}" if os.path.exists(SLF4J) else ZK_JAR
        with open(os.path.join(data, "zookeeper.log"), "ab") as log:
            self.processes[i] = subprocess.Popen(
                ["java", "-Xmx128m", "-XX:+UseSerialGC", "-Dzookeeper.jmx.log4j.disable=true",
                 "-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                 os.path.join(data, "zoo.cfg")],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if wait:
            self.wait_serving()

    def stop(self, i):
        process = self.processes.pop(i, None)
        if process is not None:
            process.kill()
            process.wait()

    def mode(self, i):
        for line in four_letter(self.client_ports[i], "srvr").splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def serving(self):
        modes = [self.mode(i) for i in self.processes]
        return all(modes) and modes.count("leader") == 1

    def wait_serving(self, timeout=90):
        wait_until(self.serving, timeout, "the ZooKeeper ensemble to serve")

    def leader(self):
        return next(i for i in self.processes if self.mode(i) == "leader")

    def hosts(self, host="127.0.0.1"):
        return ",".join(f"{host}:{self.client_ports[i]}" for i in self.ids)

    def close(self):
        for i in list(self.processes):
            self.stop(i)
        shutil.rmtree(self.dir, ignore_errors=True)
