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
from nestedflow.resources.heat_compat import clients
from nestedflow.resources.registry import ResourceRegistry
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


#: A third-party plugin in the common shape (written for this test): its
#: own __init__(name, json_snippet, stack), a deprecated property moved to
#: its successor by a REPLACE rule, a name looked up by a RESOLVE rule
#: through its client plugin's finder, Heat's default handle_delete.
WIDGET_PLUGIN = '''
from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes, constraints, properties, resource, support
from heat.engine import translation


class Widget(resource.Resource):
    support_status = support.SupportStatus(version="2014.1")
    default_client_name = "widgets"
    entity = "widgets"

    PROPERTIES = (FLAVOR, FLAVOR_ID, SIZE) = ("flavor", "flavor_id", "size")
    properties_schema = {
        FLAVOR: properties.Schema(properties.Schema.STRING, _("Flavor name or id.")),
        FLAVOR_ID: properties.Schema(
            properties.Schema.STRING, _("Deprecated: use flavor."),
            support_status=support.SupportStatus(status=support.DEPRECATED)),
        SIZE: properties.Schema(properties.Schema.INTEGER, _("Size."), default=1,
                                update_allowed=True, constraints=[constraints.Range(1, 10)]),
    }
    attributes_schema = {"size": attributes.Schema(_("Size."),
                                                   type=attributes.Schema.INTEGER)}

    def __init__(self, name, json_snippet, stack):
        super(Widget, self).__init__(name, json_snippet, stack)
        self.made_by = "vendor"

    def translation_rules(self, props):
        return [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE,
                                        [self.FLAVOR], value_path=[self.FLAVOR_ID]),
            translation.TranslationRule(props, translation.TranslationRule.RESOLVE,
                                        [self.FLAVOR], client_plugin=self.client_plugin(),
                                        finder="find_flavor_id"),
        ]

    def validate(self):
        super(Widget, self).validate()
        if self.properties[self.FLAVOR] is None:
            raise exception.PropertyUnspecifiedError(self.FLAVOR, self.FLAVOR_ID)

    def handle_create(self):
        widget = self.client().widgets.create(flavor=self.properties[self.FLAVOR],
                                              size=self.properties[self.SIZE],
                                              made_by=self.made_by)
        self.resource_id_set(widget["id"])

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self.client().widgets.resize(self.resource_id, prop_diff[self.SIZE])

    def _resolve_attribute(self, name):
        return self.client().widgets.get(self.resource_id)[name]


def resource_mapping():
    return {"Vendor::Widget": Widget}
'''


class Widgets:
    FLAVORS = {"m1.small": "flavor-1", "m1.large": "flavor-2"}

    def __init__(self):
        self.objects = {}

    def create(self, **fields):
        widget = {"id": f"widget-{len(self.objects)}", **fields}
        self.objects[widget["id"]] = widget
        return widget

    def resize(self, widget_id, size):
        self.objects[widget_id]["size"] = size

    def get(self, widget_id):
        if widget_id not in self.objects:
            raise NotFound(widget_id)
        return self.objects[widget_id]

    def delete(self, widget_id):
        self.get(widget_id)
        del self.objects[widget_id]


class WidgetClient:
    def __init__(self):
        self.widgets = Widgets()


WIDGETS = WidgetClient()


class WidgetPlugin(clients.ClientPlugin):
    def _create(self, version=None):
        return WIDGETS

    def find_flavor_id(self, name_or_id):
        if name_or_id in Widgets.FLAVORS.values():
            return name_or_id
        if name_or_id not in Widgets.FLAVORS:
            raise NotFound(f"no flavor {name_or_id}")
        return Widgets.FLAVORS[name_or_id]


@pytest.fixture
def widget_engine(make_engine, sqlite_url, tmp_path):
    (tmp_path / "widget.py").write_text(WIDGET_PLUGIN)
    clients.register_client_plugin("widgets", WidgetPlugin)
    CONF.set_override("plugin_dirs", [str(tmp_path)], group="heat_compat")
    yield make_engine(sqlite_url, registry=ResourceRegistry.for_testing({}))
    CONF.clear_override("plugin_dirs", group="heat_compat")
    clients.unregister_client("widgets")


def _widget(**properties):
    return {"heat_template_version": "2016-10-14",
            "resources": {"w": {"type": "Vendor::Widget", "properties": properties}},
            "outputs": {"size": {"value": {"get_attr": ["w", "size"]}},
                        "id": {"value": {"get_resource": "w"}}}}


def test_a_third_party_plugin(widget_engine, stack_name):
    from nestedflow import exceptions

    engine = widget_engine
    # Its translation_rules() need the client plugin: none registered refuses
    # the template, naming the resource.
    clients.unregister_client("widgets")
    with pytest.raises(exceptions.StackValidationFailed,
                       match=r"resources\.w\.properties: LookupError: no client 'widgets'"):
        engine.create_stack(stack_name, _widget(flavor="m1.small"))
    clients.register_client_plugin("widgets", WidgetPlugin)
    # REPLACE: both the deprecated property and its successor given.
    with pytest.raises(exceptions.StackValidationFailed,
                       match="Cannot define the following properties at the same time: "
                             "flavor, flavor_id"):
        engine.create_stack(stack_name, _widget(flavor="m1.small", flavor_id="m1.large"))
    # validate(): neither given.
    with pytest.raises(exceptions.StackValidationFailed,
                       match="resources.w: At least one of the following properties must "
                             "be specified: flavor, flavor_id"):
        engine.create_stack(stack_name, _widget(size=2))

    # flavor_id moved to flavor (stored so), the name resolved by the finder
    # before handle_create.
    stack = _wait(engine, engine.create_stack(stack_name, _widget(flavor_id="m1.large")).id,
                  "CREATE_COMPLETE")
    widget = WIDGETS.widgets.objects[stack.outputs["id"]]
    assert widget == {"id": stack.outputs["id"], "flavor": "flavor-2", "size": 1,
                      "made_by": "vendor"}
    stored = engine.list_resources(stack.id)[0].properties
    assert (stored["flavor"], stored["flavor_id"]) == ("m1.large", None)

    engine.update_stack(stack.id, _widget(flavor_id="m1.large", size=3))
    stack = _wait(engine, stack.id, "UPDATE_COMPLETE")
    assert stack.outputs["size"] == 3 and widget["size"] == 3

    engine.delete_stack(stack.id)
    _wait(engine, stack.id, "DELETE_COMPLETE")
    assert widget["id"] not in WIDGETS.widgets.objects
