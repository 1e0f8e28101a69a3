"""Heat 27.0.1's own plugin files for the plugin_dirs tests, taken unedited
from the peer virtualenv ``tools/heat-peer.sh`` installs (it installs it on
a fresh machine; nestedflow's process never imports Heat, it only reads
these files through ``[heat_compat] plugin_dirs``)."""

import functools
import pathlib
import shutil
import subprocess

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]

#: Heat's service-free plugins (heat/engine/resources/openstack/...), the
#: name each is copied under, and the type its resource_mapping() names.
SERVICE_FREE = {
    "heat/none_resource.py": "OS::Heat::None",
    "heat/value.py": "OS::Heat::Value",
    "heat/random_string.py": "OS::Heat::RandomString",
    "heat/test_resource.py": "OS::Heat::TestResource",
    "heat/delay.py": "OS::Heat::Delay",
    "heat/access_policy.py": "OS::Heat::AccessPolicy",
    "heat/ha_restarter.py": "OS::Heat::HARestarter",
    "designate/domain.py": "OS::Designate::Domain",
}
KEYSTONE_DOMAIN = {"keystone/domain.py": "OS::Keystone::Domain"}


@functools.cache
def heat_package():
    """``.../site-packages/heat`` of the peer virtualenv (installed if missing)."""
    venv = subprocess.run([str(REPOSITORY / "tools" / "heat-peer.sh")], check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    found = sorted(pathlib.Path(venv).glob("lib/python3*/site-packages/heat"))
    assert found, f"no heat package in the peer virtualenv {venv}"
    return found[-1]


def copy_plugins(target, files):
    """Copy ``files`` (paths under heat/engine/resources/openstack) byte for
    byte into ``target``; a file's module name is its path with ``/`` as
    ``_`` (two ``domain.py`` files). Returns ``target``."""
    source = heat_package() / "engine" / "resources" / "openstack"
    target.mkdir(parents=True, exist_ok=True)
    for relative in files:
        copied = target / relative.replace("/", "_")
        shutil.copyfile(source / relative, copied)
        assert copied.read_bytes() == (source / relative).read_bytes()
    return target
