"""A plugin written in Heat's style runs under HeatStyleResource (Must show 2
of the embedding issue): create polling that parks instead of holding a
thread, UpdateReplace from handle_update, updates in place, handle_delete on
rollback. The plugin below uses only Heat's plugin API; its imports are the
only lines a port from Heat changes."""

import threading
import time

import pytest

from nestedflow.conf import CONF
from nestedflow.resources.heat_compat import (
    attributes,
    constraints,
    exception,
    properties,
    resource,
)
from nestedflow.resources.none import NoneResource
from nestedflow.resources.registry import ResourceRegistry

BUILD_SECONDS = 5.0


class FakeCloud:
    """The servers the plugin "creates" (a real cloud would be behind a client)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.servers = {}
        self.deleted = []
        self.building = 0
        self.peak_building = 0
        self.updates_in_place = []

    def boot(self, name, flavor, fail=False):
        with self.lock:
            server_id = f"srv-{len(self.servers) + len(self.deleted)}-{name}"
            self.servers[server_id] = {"name": name, "flavor": flavor, "ready_at":
                                       time.monotonic() + BUILD_SECONDS, "fail": fail}
            self.building += 1
            self.peak_building = max(self.peak_building, self.building)
            return server_id

    def ready(self, server_id):
        with self.lock:
            server = self.servers[server_id]
            if time.monotonic() < server["ready_at"]:
                return False
            self.building -= 1
            if server["fail"]:
                raise exception.ResourceInError("boot failed", "ERROR")
            return True


CLOUD = FakeCloud()


class Server(resource.Resource):
    """Written as a Heat plugin: Heat's schemas, handlers and helpers only."""

    PROPERTIES = (FLAVOR, IMAGE, FAIL) = ("flavor", "image", "fail")

    properties_schema = {
        FLAVOR: properties.Schema(properties.Schema.STRING, "Flavor.", default="m1.small",
                                  update_allowed=True,
                                  constraints=[constraints.AllowedValues(
                                      ["m1.small", "m1.large"])]),
        IMAGE: properties.Schema(properties.Schema.STRING, "Image.", required=True,
                                 update_allowed=True,
                                 constraints=[constraints.Length(min=1)]),
        FAIL: properties.Schema(properties.Schema.BOOLEAN, "Fail the build.",
                                default=False),
    }
    attributes_schema = {
        "name": attributes.Schema("Server name.", type=attributes.Schema.STRING),
    }

    def handle_create(self):
        server_id = self.client("fake").boot(self.physical_resource_name(),
                                             self.properties[self.FLAVOR],
                                             fail=self.properties[self.FAIL])
        self.resource_id_set(server_id)
        self.data_set("image", self.properties[self.IMAGE])
        return server_id

    def check_create_complete(self, server_id):
        return self.client("fake").ready(server_id)

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        if self.IMAGE in prop_diff:
            raise exception.UpdateReplace(self.name)
        if self.FLAVOR in prop_diff:
            CLOUD.updates_in_place.append((self.resource_id, prop_diff[self.FLAVOR]))
            self.client("fake").servers[self.resource_id]["flavor"] = prop_diff[self.FLAVOR]

    def needs_replace_with_prop_diff(self, changed_properties_set, after_props, before_props):
        # Heat's hook, as an instance method: a flavor change while failing replaces.
        return self.FLAVOR in changed_properties_set and bool(before_props.get(self.FAIL))

    def handle_delete(self):
        if self.resource_id is not None:
            with CLOUD.lock:
                CLOUD.servers.pop(self.resource_id, None)
                CLOUD.deleted.append(self.resource_id)

    def _resolve_attribute(self, name):
        if name == "name" and self.resource_id:
            return self.client("fake").servers[self.resource_id]["name"]
        return None


@pytest.fixture
def engine(make_engine, sqlite_url):
    from nestedflow.resources.heat_compat import clients

    clients.register_client("fake", lambda request_context: CLOUD)
    CONF.set_override("max_nested_waits", 0, group="engine")
    registry = ResourceRegistry.for_testing({"Test::Server": Server,
                                             "OS::Heat::None": NoneResource})
    yield make_engine(sqlite_url, registry=registry, max_workers=8)
    CONF.clear_override("max_nested_waits", group="engine")
    clients.unregister_client("fake")


def _template(count, **props):
    return {"heat_template_version": "2018-08-31",
            "resources": {f"s{i}": {"type": "Test::Server",
                                    "properties": {"image": "cirros", **props}}
                          for i in range(count)},
            "outputs": {"name": {"value": {"get_attr": ["s0", "name"]}}}}


def _worker_threads():
    return sum(1 for t in threading.enumerate() if t.name.startswith("nestedflow-worker-"))


def test_200_servers_wait_at_once_on_a_pool_of_8_threads(engine, stack_name):
    CLOUD.peak_building = 0
    before = _worker_threads()
    peak_threads = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak_threads[0] = max(peak_threads[0], _worker_threads() - before)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    try:
        stack = engine.create_stack(stack_name, _template(200))
        finished = engine.wait(stack.id, timeout=120)
    finally:
        done.set()
        watcher.join()
    elapsed = time.monotonic() - started
    assert finished.stack_status == "CREATE_COMPLETE", finished.status_reason
    # All 200 were building at once: holding a thread each, 8 threads would
    # have needed 25 rounds of 5 s.
    assert CLOUD.peak_building == 200
    assert elapsed < 4 * BUILD_SECONDS, elapsed
    assert peak_threads[0] <= 8
    print(f"200 x {BUILD_SECONDS}s builds: {elapsed:.1f}s on {peak_threads[0]} threads")
    assert finished.outputs["name"].startswith(f"{stack_name}-s0-")


def test_update_in_place_replace_and_rollback_deletes(engine, stack_name):
    stack = engine.create_stack(stack_name, _template(2))
    assert engine.wait(stack.id, timeout=60).stack_status == "CREATE_COMPLETE"
    ids = {r.name: r.physical_id for r in engine.list_resources(stack.id)}

    # flavor: handle_update in place; same server.
    engine.update_stack(stack.id, _template(2, flavor="m1.large"))
    updated = engine.wait(stack.id, timeout=60)
    assert updated.stack_status == "UPDATE_COMPLETE", updated.status_reason
    assert {r.name: r.physical_id for r in engine.list_resources(stack.id)} == ids
    assert sorted(CLOUD.updates_in_place)[-2:] == sorted((i, "m1.large") for i in ids.values())

    # image: handle_update raises UpdateReplace; new servers, old ones deleted.
    engine.update_stack(stack.id, {**_template(2, flavor="m1.large"),
                                   "resources": {f"s{i}": {"type": "Test::Server",
                                                           "properties": {"image": "fedora",
                                                                          "flavor": "m1.large"}}
                                                 for i in range(2)}})
    assert engine.wait(stack.id, timeout=60).stack_status == "UPDATE_COMPLETE"
    replaced = {r.name: r.physical_id for r in engine.list_resources(stack.id)}
    assert set(replaced.values()).isdisjoint(ids.values())
    assert set(ids.values()) <= set(CLOUD.deleted)

    # A failed create rolls back: handle_delete of every server it made.
    other = engine.create_stack(f"{stack_name}-rb", {
        "heat_template_version": "2018-08-31",
        "resources": {"ok": {"type": "Test::Server", "properties": {"image": "x"}},
                      "bad": {"type": "Test::Server",
                              "properties": {"image": "x", "fail": True}}}})
    rolled = engine.wait(other.id, timeout=60)
    assert rolled.stack_status == "ROLLBACK_COMPLETE", rolled.status_reason
    made = [sid for sid in list(CLOUD.servers) + CLOUD.deleted if f"{stack_name}-rb-" in sid]
    assert made and set(made) <= set(CLOUD.deleted)


def test_heat_schema_is_validated(engine, stack_name):
    from nestedflow import exceptions

    with pytest.raises(exceptions.StackValidationFailed, match="resources.s0.properties.flavor"):
        engine.create_stack(stack_name, _template(1, flavor="m9.huge"))
