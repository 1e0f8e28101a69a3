"""A Heat plugin that talks to its cloud through ``self.client()``: Heat
27.0.1's own ``OS::Keystone::Domain`` (heat/engine/resources/openstack/
keystone/domain.py, unedited, through plugin_dirs), served by a client the
test registers -- a small in-memory stand-in for keystoneclient, as Heat's
own test_domain.py uses a mock behind ``FakeKeystoneClient(client=...)``.

Expected calls and values: heat/tests/openstack/keystone/test_domain.py.
"""

import itertools

import pytest

from nestedflow.conf import CONF
from nestedflow.plugins.loader import ResourceRegistry
from nestedflow.resources.heat_compat import clients
from tests.functional import heat_plugin_files


class NotFound(Exception):
    """keystoneclient's NotFound carries the HTTP status as ``http_status``."""

    http_status = 404


class Domain:
    def __init__(self, domain_id, **fields):
        self.id = domain_id
        self.fields = fields

    def to_dict(self):
        return {"id": self.id, **self.fields}


class Domains:
    """keystoneclient.v3 ``domains`` manager: the calls the plugin makes."""

    def __init__(self):
        self.objects = {}
        self.calls = []
        self._ids = itertools.count(1)

    def create(self, name, description=None, enabled=True):
        self.calls.append(("create", {"name": name, "description": description,
                                      "enabled": enabled}))
        domain = Domain(f"domain-{next(self._ids)}", name=name, description=description,
                        enabled=enabled)
        self.objects[domain.id] = domain
        return domain

    def update(self, domain, name=None, description=None, enabled=None):
        self.calls.append(("update", {"domain": domain, "name": name,
                                      "description": description, "enabled": enabled}))
        fields = self._get(domain).fields
        fields.update({key: value for key, value in (("name", name), ("description", description),
                                                     ("enabled", enabled)) if value is not None})

    def get(self, domain):
        return self._get(domain)

    def delete(self, domain):
        self.calls.append(("delete", domain))
        self._get(domain)
        del self.objects[domain]

    def _get(self, domain):
        if domain not in self.objects:
            raise NotFound(f"Could not find domain: {domain}")
        return self.objects[domain]


class Keystone:
    def __init__(self):
        self.domains = Domains()


class Wrapper:
    """What Heat's keystone client plugin gives: the v3 client is ``.client``
    (KeystoneDomain.client() returns ``super().client().client``)."""

    def __init__(self, keystone):
        self.client = keystone


KEYSTONE = Keystone()
CONTEXTS = []


def _factory(context):
    CONTEXTS.append(context)
    return Wrapper(KEYSTONE)


class KeystonePlugin(clients.ClientPlugin):
    """The host's own client plugin class (Heat's ClientPlugin API)."""

    def _create(self, version=None):
        return _factory(self.context)

    def is_not_found(self, ex):
        return isinstance(ex, NotFound)


@pytest.fixture(params=["register_client", "register_client_plugin"])
def engine(request, make_engine, sqlite_url, tmp_path):
    plugin_dir = heat_plugin_files.copy_plugins(
        tmp_path / "plugins", {**heat_plugin_files.KEYSTONE_DOMAIN,
                               "heat/test_resource.py": "OS::Heat::TestResource"})
    KEYSTONE.domains = Domains()
    if request.param == "register_client":
        clients.register_client("keystone", _factory)
    else:
        clients.register_client_plugin("keystone", KeystonePlugin)
    CONF.set_override("plugin_dirs", [str(plugin_dir)], group="heat_compat")
    CONF.set_override("poll_interval", 0.05, group="heat_compat")
    yield make_engine(sqlite_url, registry=ResourceRegistry.for_testing({}))
    CONF.clear_override("plugin_dirs", group="heat_compat")
    CONF.clear_override("poll_interval", group="heat_compat")
    clients.unregister_client("keystone")


def _template(**properties):
    return {"heat_template_version": "2017-02-24",
            "resources": {"test_domain": {"type": "OS::Keystone::Domain",
                                          "properties": properties}},
            "outputs": {"show": {"value": {"get_attr": ["test_domain", "show"]}},
                        "id": {"value": {"get_resource": "test_domain"}}}}


def _wait(engine, stack_id, expected):
    stack = engine.wait(stack_id, timeout=120)
    assert f"{stack.action}_{stack.status}" == expected, stack.status_reason
    return stack


def test_keystone_domain_through_its_client(engine, stack_name):
    domains = KEYSTONE.domains
    # test_domain_handle_create: the template's values, enabled 'True' as True.
    stack = engine.create_stack(stack_name, _template(
        name="test_domain_1", description="Test domain", enabled="True"))
    stack = _wait(engine, stack.id, "CREATE_COMPLETE")
    assert domains.calls == [("create", {"name": "test_domain_1",
                                         "description": "Test domain", "enabled": True})]
    domain_id = stack.outputs["id"]
    assert domain_id in domains.objects
    assert CONTEXTS[-1] is None  # the embedded default request context
    # test_get_live_state: ``show`` is the object's to_dict() (Heat's
    # default _show_resource: entity 'domains' through the default client).
    assert stack.outputs["show"] == {"id": domain_id, "name": "test_domain_1",
                                     "description": "Test domain", "enabled": True}

    # test_domain_handle_update: every changed property, in place.
    engine.update_stack(stack.id, _template(
        name="test_domain_2", description="Test Domain updated", enabled=False))
    stack = _wait(engine, stack.id, "UPDATE_COMPLETE")
    assert domains.calls[-1] == ("update", {"domain": domain_id, "name": "test_domain_2",
                                            "description": "Test Domain updated",
                                            "enabled": False})
    assert stack.outputs["id"] == domain_id
    assert stack.outputs["show"]["name"] == "test_domain_2"
    assert stack.outputs["show"]["enabled"] is False

    # Replaced (marked unhealthy): a new domain, the old one deleted by
    # Heat's default handle_delete (entity 'domains').
    engine.mark_resource_unhealthy(stack.id, "test_domain", resource_status_reason="test")
    engine.update_stack(stack.id, _template(
        name="test_domain_2", description="Test Domain updated", enabled=False))
    stack = _wait(engine, stack.id, "UPDATE_COMPLETE")
    assert stack.outputs["id"] != domain_id
    assert ("delete", domain_id) in domains.calls and domain_id not in domains.objects

    # Deleted behind nestedflow's back: the delete's NotFound is ignored.
    del domains.objects[stack.outputs["id"]]
    engine.delete_stack(stack.id)
    _wait(engine, stack.id, "DELETE_COMPLETE")
    assert domains.calls[-1] == ("delete", stack.outputs["id"])


def test_keystone_domain_rolled_back(engine, stack_name):
    domains = KEYSTONE.domains
    template = _template(name="rolled")
    template["resources"]["failing"] = {"type": "OS::Heat::TestResource",
                                        "properties": {"fail": True}}
    stack = engine.create_stack(stack_name, template)
    _wait(engine, stack.id, "ROLLBACK_COMPLETE")
    made = [args for call, args in domains.calls if call == "create" and args["name"] == "rolled"]
    assert len(made) == 1
    assert not [d for d in domains.objects.values() if d.fields["name"] == "rolled"]
