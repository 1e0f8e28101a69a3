"""Custom constraints: the nestedflow.constraints plugins and the policy for
unknown ones. Valid and invalid values are those of Heat's
heat/tests/constraints/test_common_constraints.py."""

import logging

import pytest

from nestedflow.conf import CONF
from nestedflow.constraints import registry
from nestedflow.exceptions import StackValidationFailed
from nestedflow.properties import constraints
from nestedflow.template.parameters import resolve_parameters
from nestedflow.template.template import Template

BUILT_INS = ["cron_expression", "dns_domain", "dns_name", "expiration", "ip_addr",
             "ip_or_cidr", "iso_8601", "json_string", "mac_addr", "net_cidr",
             "rel_dns_name", "timezone"]


def test_built_ins_are_entry_points():
    assert set(BUILT_INS) <= set(registry.names())


IP_V4_OK = ["1.1.1.1", "1.0.1.1", "255.255.255.255"]
IP_V4_BAD = ["1.1", "1.1.", "1.1.1", "1.1.1.", "1.1.1.256", "invalidate format", "1.a.1.1"]
IP_V6_OK = ["2002:2002::20c:29ff:fe7d:811a", "::1", "2002::", "2002::1"]
IP_V6_BAD = ["2002::2001::1", "2002::g", "invalidate format", "2001::0::",
             "20c:29ff:fe7d:811a"]
CIDR_OK = ["10.0.0.0/24", "6000::/64"]
CIDR_BAD = ["::/129", "Invalid cidr", "300.0.0.0/24", "10.0.0.0/33", "10.0.0/24",
            "10.0/24", "10.0.a.10/24", "8.8.8.0/ 24", "8.8.8.8"]

CASES = [
    # TestIPConstraint
    *[("ip_addr", v, True) for v in IP_V4_OK + IP_V6_OK],
    *[("ip_addr", v, False) for v in IP_V4_BAD + IP_V6_BAD],
    # TestMACConstraint
    *[("mac_addr", v, True) for v in ["01:23:45:67:89:ab", "01-23-45-67-89-ab",
                                      "0123.4567.89ab"]],
    *[("mac_addr", v, False) for v in ["8.8.8.8", "0a-1b-3c-4d-5e-6f-1f",
                                       "0a-1b-3c-4d-5e-xx"]],
    # TestCIDRConstraint, TestIPCIDRConstraint
    *[("net_cidr", v, True) for v in CIDR_OK],
    *[("net_cidr", v, False) for v in CIDR_BAD],
    *[("ip_or_cidr", v, True) for v in CIDR_OK + IP_V4_OK + IP_V6_OK],
    *[("ip_or_cidr", v, False) for v in CIDR_BAD[:-1] + IP_V4_BAD[:-2] + IP_V6_BAD[:2]],
    # TestISO8601Constraint
    *[("iso_8601", v, True) for v in ["2050-01-01", "2050-01-01T23:59:59",
                                      "2050-01-01T23:59:59+00:00",
                                      "2050-01-01T23:59:59+0000"]],
    ("iso_8601", "Fri 13th, 2050", False),
    # CRONExpressionConstraint
    ("cron_expression", "0 23 * * *", True),
    ("cron_expression", "* * * * * 100", False),
    ("cron_expression", "* *", False),
    # TimezoneConstraintTest
    ("timezone", "Asia/Taipei", True),
    ("timezone", "wrong_timezone", False),
    # DNSNameConstraintTest, DNSDomainConstraintTest, FIPDNSNameConstraintTest
    ("dns_name", "openstack.org.", True),
    *[("dns_name", v, False) for v in ["-openstack.org", ".openstack.org",
                                       "$openstack.org", "openstack.123."]],
    ("dns_domain", "openstack.org.", True),
    ("dns_domain", "openstack.org", False),
    ("rel_dns_name", "myvm.openstack", True),
    ("rel_dns_name", "myvm.openstack.", False),
    # ExpirationConstraintTest, JsonStringConstraintTest
    ("expiration", "2999-01-01T00:00:00Z", True),
    ("expiration", "1970-01-01T00:00:00Z", False),
    ("json_string", '{"a": [1]}', True),
    ("json_string", '{"a": ', False),
]


@pytest.mark.parametrize("name, value, valid", CASES)
def test_heat_values(name, value, valid):
    constraint = constraints.from_hot([{"custom_constraint": name}], "c")[0]
    if valid:
        constraint.validate(value)
    else:
        with pytest.raises(ValueError, match=r"^Error validating value "):
            constraint.validate(value)


@pytest.mark.parametrize("name, value, message", [
    ("dns_name", "-openstack.org", "'-openstack.org' not in valid format. Reason: Name "
     "'-openstack' must not start or end with a hyphen."),
    ("dns_domain", "openstack.org", "'openstack.org' must end with '.'."),
    ("rel_dns_name", "myvm.openstack.",
     "'myvm.openstack.' is a FQDN. It should be a relative domain name."),
    ("mac_addr", "8.8.8.8", "Invalid MAC address."),
])
def test_heat_messages(name, value, message):
    constraint = constraints.from_hot([{"custom_constraint": name}], "c")[0]
    with pytest.raises(ValueError) as info:
        constraint.validate(value)
    assert str(info.value) == f"Error validating value {value!r}: {message}"


def _template(constraint):
    return Template({"heat_template_version": "2021-04-16", "parameters": {
        "p": {"type": "string", "constraints": [constraint]}}})


def test_parameter_refused_with_path():
    tmpl = _template({"custom_constraint": "net_cidr"})
    assert resolve_parameters(tmpl, {"p": "10.0.0.0/24"})["p"] == "10.0.0.0/24"
    with pytest.raises(StackValidationFailed) as info:
        resolve_parameters(tmpl, {"p": "10.0.0.0/33"})
    assert info.value.path == "parameters.p"
    assert str(info.value).startswith("parameters.p: Error validating value '10.0.0.0/33'")


def test_list_parameter_checked_per_item():
    tmpl = Template({"heat_template_version": "2021-04-16", "parameters": {
        "p": {"type": "comma_delimited_list",
              "constraints": [{"custom_constraint": "ip_addr"}]}}})
    assert resolve_parameters(tmpl, {"p": "1.1.1.1,::1"})["p"] == ["1.1.1.1", "::1"]
    with pytest.raises(StackValidationFailed, match="'1.1'"):
        resolve_parameters(tmpl, {"p": "1.1.1.1,1.1"})


def test_unknown_is_accepted_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        tmpl = _template({"custom_constraint": "nova.flavor.test"})
    assert resolve_parameters(tmpl, {"p": "m1.small"})["p"] == "m1.small"
    assert "custom constraint 'nova.flavor.test' is not checked" in caplog.text


def test_unknown_is_refused_under_the_option():
    CONF.set_override("refuse_unknown_custom_constraints", True, group="constraints")
    try:
        with pytest.raises(StackValidationFailed) as info:
            _template({"custom_constraint": "nova.flavor"})
    finally:
        CONF.clear_override("refuse_unknown_custom_constraints", group="constraints")
    assert info.value.path == "parameters.p.constraints[0].custom_constraint"
    assert "unknown custom constraint 'nova.flavor': no plugin of that name" in str(info.value)
