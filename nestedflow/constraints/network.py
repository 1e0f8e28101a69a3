"""Network address constraints, as Heat's common_constraints (ip_addr,
mac_addr, net_cidr, ip_or_cidr, dns_name, rel_dns_name, dns_domain).

Heat checks addresses with neutron_lib's validators and netaddr; the same
rules are written out here with netaddr only (neutron_lib is a heavy
dependency for two functions)."""

import re

import netaddr

from nestedflow.constraints.base import CustomConstraint

_DNS_LABEL = re.compile("[a-z0-9-]{1,63}$")
_FQDN_MAX_LEN = 255


def _no_whitespace(value):
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    if re.search(r"\s", value):
        raise ValueError(f"{value!r} contains whitespace")
    return value


def check_ip(value):
    """neutron_lib validate_ip_address: IPv6 has ':', IPv4 exactly three
    dots and no leading zeros (they could be read as octal)."""
    try:
        ip = netaddr.IPAddress(_no_whitespace(value), flags=netaddr.core.ZEROFILL)
        if ":" not in value and value.count(".") != 3:
            raise ValueError
    except (ValueError, netaddr.AddrFormatError):
        raise ValueError(f"{value!r} is not a valid IP address") from None
    if ip.version == 4 and str(ip) != value:
        raise ValueError(f"{value!r} is not an accepted IP address, {str(ip)!r} is recommended")


def check_subnet(value):
    """neutron_lib validate_subnet: a prefix length is required and an IPv4
    network must be written in its canonical form."""
    try:
        net = netaddr.IPNetwork(_no_whitespace(value))
    except (ValueError, netaddr.AddrFormatError):
        raise ValueError(f"{value!r} is not a valid IP subnet") from None
    if "/" not in value or (net.version == 4 and str(net) != value):
        raise ValueError(f"{value!r} isn't a recognized IP subnet cidr, "
                         f"{str(net.cidr)!r} is recommended")


def check_dns_name(value):
    """heat.common.netutils.validate_dns_format."""
    if not value:
        return
    trimmed = value[:-1] if value.endswith(".") else value
    if len(trimmed) > _FQDN_MAX_LEN:
        raise ValueError(f"{trimmed!r} exceeds the {_FQDN_MAX_LEN} character FQDN limit")
    names = trimmed.split(".")
    for name in names:
        if not name:
            raise ValueError("Encountered an empty component.")
        if name.startswith("-") or name.endswith("-"):
            raise ValueError(f"Name '{name}' must not start or end with a hyphen.")
        if not _DNS_LABEL.match(name):
            raise ValueError(f"Name '{name}' must be 1-63 characters long, each of which "
                             "can only be alphanumeric or a hyphen.")
    if value.endswith(".") and len(names) > 1 and names[-1].isdigit():
        raise ValueError(f"TLD '{names[-1]}' must not be all numeric.")


class IPAddress(CustomConstraint):
    description = "an IPv4 or IPv6 address"

    def validate(self, value):
        check_ip(value)


class MACAddress(CustomConstraint):
    description = "a MAC address"

    def validate(self, value):
        if not isinstance(value, str) or not netaddr.valid_mac(value):
            raise ValueError("Invalid MAC address.")


class CIDR(CustomConstraint):
    description = "a network in CIDR notation"

    def validate(self, value):
        try:
            netaddr.IPNetwork(netaddr.cidr_abbrev_to_verbose(_no_whitespace(value)))
        except (ValueError, TypeError, netaddr.AddrFormatError) as exc:
            raise ValueError(f"Invalid net cidr {exc}") from None
        check_subnet(value)


class IPOrCIDR(CustomConstraint):
    description = "an IP address or a network in CIDR notation"

    def validate(self, value):
        if "/" in _no_whitespace(value):
            check_subnet(value)
        else:
            check_ip(value)


class DNSName(CustomConstraint):
    description = "a DNS name"

    def validate(self, value):
        try:
            check_dns_name(value)
        except ValueError as exc:
            raise ValueError(f"'{value}' not in valid format. Reason: {exc}") from None


class RelativeDNSName(DNSName):
    description = "a relative DNS name"

    def validate(self, value):
        if not value:
            return
        if value.endswith("."):
            raise ValueError(f"'{value}' is a FQDN. It should be a relative domain name.")
        if len(value) > _FQDN_MAX_LEN - 3:
            raise ValueError(
                f"'{value}' contains '{len(value)}' characters. Adding a domain name will "
                f"cause it to exceed the maximum length of a FQDN of '{_FQDN_MAX_LEN}'.")
        super().validate(value)


class DNSDomain(DNSName):
    description = "a DNS domain (ending with '.')"

    def validate(self, value):
        if not value:
            return
        super().validate(value)
        if not value.endswith("."):
            raise ValueError(f"'{value}' must end with '.'.")
