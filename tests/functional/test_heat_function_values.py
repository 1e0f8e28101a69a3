"""digest, filter, yaql and make_url in a real stack give the values Heat gives.

Every input is copied from Heat's own unit tests, heat/tests/test_hot.py
(openstack/heat, class HOTemplateTest; read at commit 526defd06ece), and
every expected value is the one that test asserts; each case names its
test. Heat's tests resolve one snippet against an empty template; here the
snippets run through a whole create (resource properties, attributes,
outputs, a condition) on each real database, then a delete.
"""

import sys

# Values that go through an OS::Heat::TestResource's ``value`` property and
# come back as its ``output`` attribute: that property is a string, so only
# snippets whose Heat value is a string can take this path.
THROUGH_RESOURCES = {
    # heat/tests/test_hot.py HOTemplateTest.test_digest
    "test_digest": ({"digest": ["md5", "foobar"]}, "3858f62230ac3c915f300c664312c63f"),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_string_input
    "test_yaql_string_input": (
        {"yaql": {"expression": "$.data", "data": "whynotastring"}}, "whynotastring"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_basic
    "test_make_url_basic": (
        {"make_url": {"scheme": "http", "host": "example.com", "path": "/foo/bar"}},
        "http://example.com/foo/bar"),
}

IN_OUTPUTS = {
    # heat/tests/test_hot.py HOTemplateTest.test_filter
    "test_filter": ({"filter": [[None], [1, None, 4, 2, None]]}, [1, 4, 2]),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql
    "test_yaql": ({"yaql": {"expression": "$.data.var1.sum()",
                            "data": {"var1": [1, 2, 3, 4]}}}, 10),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_list_input
    "test_yaql_list_input": ({"yaql": {"expression": "$.data.sum()",
                                       "data": [1, 2, 3, 4]}}, 10),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_int_input
    "test_yaql_int_input": ({"yaql": {"expression": "$.data + 2", "data": 2}}, 4),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_data_as_function
    "test_yaql_data_as_function": (
        {"yaql": {"expression": "$.data.var1.len()",
                  "data": {"var1": {"list_join": ["", ["1", "2"]]}}}}, 2),
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_merge
    "test_yaql_merge": (
        {"yaql": {"expression": "$.data.d.reduce($1.mergeWith($2))",
                  "data": {"d": [{"a": [1]}, {"a": [2]}, {"a": [3]}]}}},
        {"a": [1, 2, 3]}),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_ipv6
    "test_make_url_ipv6": (
        {"make_url": {"scheme": "http", "host": "::1", "path": "/foo/bar"}},
        "http://[::1]/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_ipv6_ready
    "test_make_url_ipv6_ready": (
        {"make_url": {"scheme": "http", "host": "[::1]", "path": "/foo/bar"}},
        "http://[::1]/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_port_string
    "test_make_url_port_string": (
        {"make_url": {"scheme": "https", "host": "example.com", "port": "80",
                      "path": "/foo/bar"}},
        "https://example.com:80/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_port_int
    "test_make_url_port_int": (
        {"make_url": {"scheme": "https", "host": "example.com", "port": 80,
                      "path": "/foo/bar"}},
        "https://example.com:80/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_username
    "test_make_url_username": (
        {"make_url": {"scheme": "http", "username": "wibble", "host": "example.com",
                      "path": "/foo/bar"}},
        "http://wibble@example.com/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_username_password
    "test_make_url_username_password": (
        {"make_url": {"scheme": "http", "username": "wibble", "password": "blarg",
                      "host": "example.com", "path": "/foo/bar"}},
        "http://wibble:blarg@example.com/foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_fragment
    "test_make_url_fragment": (
        {"make_url": {"scheme": "http", "host": "example.com", "path": "foo/bar",
                      "fragment": "baz"}},
        "http://example.com/foo/bar#baz"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_file: Heat's test
    # expects what urlunsplit gives on the running Python (3.12.6 changed it).
    "test_make_url_file": (
        {"make_url": {"scheme": "file", "path": "foo/bar"}},
        "file:foo/bar" if sys.version_info >= (3, 12, 6) else "file:///foo/bar"),
    # heat/tests/test_hot.py HOTemplateTest.test_make_url_file_leading_slash
    "test_make_url_file_leading_slash": (
        {"make_url": {"scheme": "file", "path": "/foo/bar"}}, "file:///foo/bar"),
}

# heat/tests/test_hot.py HOTemplateTest.test_make_url_query: Heat accepts
# either order of the query keys (a map's order is not the URL's concern).
MAKE_URL_QUERY = {"make_url": {"scheme": "http", "host": "example.com", "path": "/foo/?bar",
                               "query": {"foo#": "bar & baz", "blarg": "/wib=ble/"}}}
MAKE_URL_QUERY_EXPECTED = (
    "http://example.com/foo/%3Fbar?foo%23=bar+%26+baz&blarg=/wib%3Dble/",
    "http://example.com/foo/%3Fbar?blarg=/wib%3Dble/&foo%23=bar+%26+baz")

TEMPLATE = {
    # 2017-09-01 (pike) is the first version with all four functions and
    # with yaql as a condition function: make_url and yaql conditions are
    # pike's, filter ocata's, yaql newton's, digest kilo's.
    "heat_template_version": "2017-09-01",
    # heat/tests/test_hot.py HOTemplateTest.test_yaql_as_condition: its
    # parameter and expression, true for the default and false once the
    # parameter is ['nova_network', 'heat'].
    "parameters": {"ServiceNames": {"type": "comma_delimited_list",
                                    "default": ["neutron", "heat"]}},
    "conditions": {"has_neutron": {"yaql": {
        "expression": '$.data.service_names.contains("neutron")',
        "data": {"service_names": {"get_param": "ServiceNames"}}}}},
    "resources": {
        **{name: {"type": "OS::Heat::TestResource", "properties": {"value": snippet}}
           for name, (snippet, _) in THROUGH_RESOURCES.items()},
        "neutron_only": {"type": "OS::Heat::None", "condition": "has_neutron"},
    },
    "outputs": {
        **{name: {"value": {"get_attr": [name, "output"]}} for name in THROUGH_RESOURCES},
        **{name: {"value": snippet} for name, (snippet, _) in IN_OUTPUTS.items()},
        "test_make_url_query": {"value": MAKE_URL_QUERY},
        "test_yaql_as_condition": {"value": {"if": ["has_neutron", True, False]}},
    },
}


def _settled(engine, stack):
    return engine.wait(stack.id, timeout=120)


def test_outputs_and_properties_equal_heats_unit_test_values(engine, stack_name):
    stack = _settled(engine, engine.create_stack(stack_name, TEMPLATE))
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason

    expected = {name: value for name, (_, value) in {**THROUGH_RESOURCES, **IN_OUTPUTS}.items()}
    got = {name: stack.outputs[name] for name in expected}
    assert {n: (got[n], v) for n, v in expected.items() if got[n] != v} == {}
    resources = {r.name: r for r in engine.list_resources(stack.id)}
    # The outputs above read the attributes; the stored properties show the
    # functions were resolved before the resources were created.
    assert {name: resources[name].properties["value"] for name in THROUGH_RESOURCES} == {
        name: value for name, (_, value) in THROUGH_RESOURCES.items()}
    assert stack.outputs["test_make_url_query"] in MAKE_URL_QUERY_EXPECTED
    assert stack.outputs["test_yaql_as_condition"] is True
    assert "neutron_only" in resources

    # heat/tests/test_hot.py HOTemplateTest.test_yaql_as_condition, second half.
    without = _settled(engine, engine.create_stack(
        stack_name + "-nova", TEMPLATE, parameters={"ServiceNames": ["nova_network", "heat"]}))
    assert (without.action, without.status) == ("CREATE", "COMPLETE"), without.status_reason
    assert without.outputs["test_yaql_as_condition"] is False
    assert "neutron_only" not in {r.name for r in engine.list_resources(without.id)}

    for created in (stack, without):
        done = _settled(engine, engine.delete_stack(created.id))
        assert (done.action, done.status) == ("DELETE", "COMPLETE"), done.status_reason
