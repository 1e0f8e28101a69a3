"""The dashboard's WSGI application and server over real HTTP (cheroot), on
a real database: read-only, the stack list, masking, tenancy, live views
fed by notifications, and the ``nestedflow dashboard`` command. The
browser tests are in test_dashboard_browser.py."""

import contextlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from oslo_context import context as oslo_context

from nestedflow import exceptions
from nestedflow.conf import CONF
from nestedflow.dashboard import server

SECRET = "hunter2-not-shown"
CHILD = {"heat_template_version": "2016-10-14",
         "resources": {"leaf": {"type": "OS::Heat::None"}}}
TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "parameters": {"password": {"type": "string", "hidden": True, "default": "dflt-secret"},
                   "size": {"type": "number", "default": 3}},
    "resources": {
        "db": {"type": "OS::Heat::TestResource",
               "properties": {"value": {"get_param": "password"}}},
        "app": {"type": "OS::Heat::None", "depends_on": "db"},
        "child": {"type": "OS::Heat::Stack", "depends_on": "db",
                  "properties": {"template": CHILD}},
    },
    "outputs": {"dsn": {"value": {"str_replace": {
        "template": "db://user:PW@host", "params": {"PW": {"get_attr": ["db", "output"]}}}}}},
}


@contextlib.contextmanager
def served(**kwargs):
    application = server.make_app(CONF, **kwargs)
    running = server.Server(application, "127.0.0.1", 0, 8).start()
    try:
        yield running.url
    finally:
        running.stop()


def request(url, method="GET", headers=None):
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def get_json(url, headers=None):
    status, _, body = request(url, headers=headers)
    assert status == 200, (status, body)
    return json.loads(body)


@pytest.fixture
def created(sqlite_engine, stack_name):
    stack = sqlite_engine.create_stack(stack_name, TEMPLATE, parameters={"password": SECRET})
    assert sqlite_engine.wait(stack.id, timeout=60).stack_status == "CREATE_COMPLETE"
    return stack


def test_every_write_method_is_refused(sqlite_engine, created):
    before = sqlite_engine.get_stack(created.id)
    with served(engine=sqlite_engine) as url:
        for path in ("", "api/stacks", f"api/stacks/{created.id}",
                     f"api/stacks/{created.id}/events", f"api/stacks/{created.id}/live",
                     "static/stack.js", "no/such/page"):
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                status, headers, body = request(url + path, method=method)
                assert status == 405, (method, path)
                assert headers["Allow"] == "GET, HEAD"
                assert json.loads(body) == {"error": "the dashboard is read-only"}
        status, headers, body = request(url + f"api/stacks/{created.id}", method="HEAD")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    after = sqlite_engine.get_stack(created.id)
    assert (after.stack_status, after.updated_at) == (before.stack_status, before.updated_at)
    assert len(sqlite_engine.list_stacks(show_nested=True)) == 2


def test_stack_list_folds_nested_stacks_and_filters(sqlite_engine, created):
    with served(engine=sqlite_engine) as url:
        roots = get_json(url + "api/stacks")
        assert [r["name"] for r in roots] == [created.name]
        [child] = roots[0]["children"]
        assert child["name"].startswith(f"{created.name}-child")
        assert child["state"] == "CREATE_COMPLETE" and child["match"]
        # A filter keeps a root whose nested stack matches, and says which did.
        roots = get_json(url + "api/stacks?name=child")
        assert roots[0]["match"] is False and roots[0]["children"][0]["match"] is True
        assert get_json(url + "api/stacks?status=FAILED") == []
        assert get_json(url + "api/stacks?project=other") == []
        assert len(get_json(url + "api/stacks?status=create_complete")) == 1
        status, _, body = request(url + "api/stacks/no-such-stack")
        assert status == 404 and b"no-such-stack" in body


def test_stack_tree_events_and_hidden_parameters(sqlite_engine, created):
    with served(engine=sqlite_engine) as url:
        tree = get_json(url + f"api/stacks/{created.name}")
        names = sorted(r["name"] for r in tree["resources"])
        assert names == ["app", "child", "db", "leaf"]
        app = next(r for r in tree["resources"] if r["name"] == "app")
        assert app["requires"] == ["db"] and app["conductors"]["CREATE"].startswith("engine-")
        assert tree["root"]["state"] == "CREATE_COMPLETE" and tree["root"]["ended_at"]
        assert len(tree["stacks"]) == 2 and tree["last_event"] > 0

        events = get_json(url + f"api/stacks/{created.id}/events?resource=db&status=complete")
        # The filter is a part of the field: a nested stack's random name
        # may hold "db" too (its stack events carry that name).
        nested = {tree["stacks"][s]["name"] for s in tree["stacks"]}
        assert [(e["resource_name"], e["action"], e["status"]) for e in events["events"]
                if e["resource_name"] not in nested] == [("db", "CREATE", "COMPLETE")]
        assert all("db" in e["resource_name"] and e["status"] == "COMPLETE"
                   for e in events["events"])
        everything = get_json(url + f"api/stacks/{created.id}/events")["events"]
        assert {e["stack_name"] for e in everything} == set(tree["stacks"][s]["name"]
                                                           for s in tree["stacks"])

        data = get_json(url + f"api/stacks/{created.id}/data")
        text = json.dumps(data)
        assert SECRET not in text and "dflt-secret" not in text
        assert data["environment"]["parameters"]["password"] == "******"
        assert data["template"]["parameters"]["password"]["default"] == "******"
        assert data["outputs"]["dsn"] == "db://user:******@host"
        assert data["template"]["parameters"]["size"]["default"] == 3
        # Nor in anything else the dashboard serves.
        for path in ("api/stacks", f"api/stacks/{created.id}",
                     f"api/stacks/{created.id}/events"):
            assert SECRET.encode() not in request(url + path)[2]


def test_proxy_headers_scope_the_viewer_to_a_project(make_engine, sqlite_url, stack_name):
    engine = make_engine(sqlite_url)
    contexts = {p: oslo_context.RequestContext(project_id=p, user_id="u", overwrite=False)
                for p in ("proj-a", "proj-b")}
    stacks = {p: engine.create_stack(f"{stack_name}-{p}", CHILD, context=c)
              for p, c in contexts.items()}
    for stack in stacks.values():
        engine.wait(stack.id, timeout=60)
    CONF.set_override("trust_proxy_headers", True, group="dashboard")
    try:
        with served(engine=engine) as url:
            as_a = {"X-Project-Id": "proj-a", "X-Roles": "member"}
            assert [r["project"] for r in get_json(url + "api/stacks", as_a)] == ["proj-a"]
            status, _, _ = request(url + f"api/stacks/{stacks['proj-b'].id}", headers=as_a)
            assert status == 404  # another project's stack does not exist for A
            status, _, _ = request(url + f"api/stacks/{stacks['proj-b'].id}/live",
                                   headers=as_a)
            assert status == 404
            admin = {"X-Project-Id": "ops", "X-Roles": "reader,admin"}
            assert len(get_json(url + "api/stacks", admin)) == 2
            status, _, body = request(url + "api/stacks")
            assert status == 403 and b"X-Project-Id" in body
    finally:
        CONF.clear_override("trust_proxy_headers", group="dashboard")


class _Stream:
    """Reads a live view's server-sent events in a thread."""

    def __init__(self, url):
        host, port = url.split("/")[2].split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.url = url
        self.messages = []
        self.lock = threading.Lock()

    def start(self, path):
        self.conn.request("GET", "/" + path)
        response = self.conn.getresponse()
        assert response.status == 200
        assert response.headers["Content-Type"] == "text/event-stream"
        self.thread = threading.Thread(target=self._read, args=(response,), daemon=True)
        self.thread.start()

    def _read(self, response):
        event = None
        with contextlib.suppress(Exception):
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    with self.lock:
                        self.messages.append((event, json.loads(line[6:])))

    def wait_for(self, predicate, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(list(self.messages)):
                    return list(self.messages)
            time.sleep(0.05)
        raise AssertionError(f"not received: {self.messages[-5:]}")

    def close(self):
        self.conn.sock.shutdown(2) if self.conn.sock else None
        self.conn.close()


def test_live_view_follows_the_engine_notifications(sqlite_engine, stack_name):
    """A host mounting the dashboard next to its engine: no broker, the
    engine's in-process notifications feed the views."""
    first = sqlite_engine.create_stack(stack_name, CHILD)
    sqlite_engine.wait(first.id, timeout=60)
    with served(engine=sqlite_engine) as url:
        stream, listing = _Stream(url), _Stream(url)
        stream.start(f"api/stacks/{first.id}/live")
        listing.start("api/live")
        try:
            stream.wait_for(lambda m: m and m[0][0] == "hello")
            assert stream.messages[0][1]["live"] == "engine"
            sqlite_engine.update_stack(first.id, TEMPLATE, parameters={"password": SECRET})
            assert sqlite_engine.wait(first.id, timeout=60).stack_status == "UPDATE_COMPLETE"

            def settled(messages):
                events = [e for kind, m in messages if kind == "update" for e in m["events"]]
                return any(e["resource_name"] is None and e["status"] == "COMPLETE"
                           and e["action"] == "UPDATE" for e in events)

            messages = stream.wait_for(settled)
            events = [e for kind, m in messages if kind == "update" for e in m["events"]]
            ids = [e["id"] for e in events]
            assert len(ids) == len(set(ids))  # none sent twice
            seen = {(e["resource_name"], e["action"], e["status"]) for e in events}
            assert {("db", "CREATE", "IN_PROGRESS"), ("db", "CREATE", "COMPLETE"),
                    ("leaf", "CREATE", "COMPLETE")} <= seen  # leaf: the nested stack's
            assert SECRET not in json.dumps(messages)
            listed = listing.wait_for(lambda m: any(
                k == "stack" and d["state"] == "UPDATE_COMPLETE" for k, d in m))
            assert any(d["id"] == first.id for k, d in listed if k == "stack")
        finally:
            stream.close()
            listing.close()


def test_a_database_behind_the_schema_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path}/empty.sqlite"
    with pytest.raises(exceptions.NestedflowError, match="run 'nestedflow db sync' first"):
        server.make_app(CONF, db_url=url)


def test_dashboard_command_serves_until_terminated(sqlite_engine, created, sqlite_url):
    exe = shutil.which("nestedflow", path=os.path.dirname(sys.executable)) or "nestedflow"
    env = dict(os.environ, NESTEDFLOW_DB_URL=sqlite_url)
    proc = subprocess.Popen([exe, "dashboard", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("nestedflow dashboard at http://127.0.0.1:"), (
            line, proc.stderr.read() if proc.poll() is not None else "")
        url = line.split(" at ")[1].strip()
        page = request(url)[2].decode()
        assert "<title>nestedflow: stacks</title>" in page
        assert [r["id"] for r in get_json(url + "api/stacks")] == [created.id]
        assert request(url + "api/stacks", method="POST")[0] == 405
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
