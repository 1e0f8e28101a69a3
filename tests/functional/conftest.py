"""The conductor fixtures every conductor test shares: a ZooKeeper client,
a cluster of ``nestedflow-conductor`` processes on a database, and a probe
reading that database directly."""

import http.server
import threading

import pytest
from conductor_cluster import Cluster, Probe, zookeeper_client


@pytest.fixture(scope="module")
def zk():
    client = zookeeper_client()
    yield client
    client.stop()
    client.close()


@pytest.fixture
def cluster_db_url(shared_db_url):
    """The database the cluster runs on (PostgreSQL, then MariaDB); a
    module overrides it to use one database only."""
    return shared_db_url


@pytest.fixture
def cluster(cluster_db_url, tmp_path, zk):
    c = Cluster(cluster_db_url, tmp_path, zk)
    c.engine()  # migrates the database before any conductor starts
    yield c
    c.close()
    for conductor in c.conductors.values():
        print(f"---- conductor {conductor.name} ----\n{c.output(conductor)[-8000:]}")


@pytest.fixture
def probe(cluster_db_url):
    p = Probe(cluster_db_url)
    yield p
    p.close()


@pytest.fixture(scope="session")
def heat_api(tmp_path_factory):
    """Heat's heat-api and a nestedflow-engine serving Heat's RPC API behind
    it (traversals in-process), shared by the test_heat_api_* modules:
    starting and stopping the pair costs about 25 s on two cores."""
    from tests.conftest import PG_URL, reset_database
    from tests.functional.heat_api import HeatApi

    api = HeatApi(reset_database(PG_URL), tmp_path_factory.mktemp("heat-api"))
    yield api
    api.close()


@pytest.fixture(autouse=True)
def _no_current_request_context():
    """oslo.context makes the first RequestContext a thread creates its
    current one (even with overwrite=False): the contexts a test makes must
    not name the log lines of the tests after it."""
    yield
    from oslo_context import context

    context._request_store.context = None


class Server:
    """A local HTTP server (checks tests) answering each path with the status it is told."""

    def __init__(self):
        self.statuses = {}
        self.hits = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's naming)
                server.hits.append(self.path)
                queue = server.statuses.get(self.path, [200])
                status = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"hello from " + self.path.encode())

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()
