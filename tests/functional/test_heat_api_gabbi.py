"""heat-tempest-plugin's gabbi API suite, unchanged, through Heat's own
unmodified heat-api 27.0.1 against nestedflow-engine (issue 28, Must show 1).

The six files of ``heat_tempest_plugin/tests/api/gabbits`` (47 tests) run
with the peer's ``gabbi-run``, as heat-tempest-plugin's loader would run
them minus Keystone: ``gabbi-run`` ignores the files' ``AuthenticationFixture``
(it loads fixtures only from a fixture module) and heat-api's noauth
flavor ignores the token.
"""

import glob
import os
import re
import subprocess
import uuid

from tests.functional.heat_api import peer_site_packages

GABBITS = "heat_tempest_plugin/tests/api/gabbits"


def test_gabbi_suite_47_of_47(heat_api):
    site = peer_site_packages()
    files = sorted(glob.glob(os.path.join(site, GABBITS, "*.yaml")))
    assert [os.path.basename(f) for f in files] == [
        "environments.yaml", "resources.yaml", "resourcetypes.yaml", "softwareconfig.yaml",
        "stacks.yaml", "templates.yaml"]
    env = dict(os.environ, OS_TOKEN="unused", PREFIX=f"nf{uuid.uuid4().hex[:8]}")
    result = subprocess.run(
        [os.path.join(heat_api.venv, "bin", "gabbi-run"), heat_api.url(), "--",
         *[os.path.relpath(f, site) for f in files]],
        cwd=site, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    passed = re.findall(r"✓ gabbi-runner\.(\S+)", output)
    failed = re.findall(r"✗ gabbi-runner\.(\S+)", output)
    assert failed == [], output + heat_api.log()
    assert len(passed) == 47, output
    assert result.returncode == 0, output


def test_every_method_heat_api_calls_is_served():
    """The RPC methods heat-api v1 calls (heat/api/openstack/v1/*.py of the
    peer's openstack-heat 27.0.1, read as text: nestedflow never imports
    Heat) are all methods of the endpoint."""
    from nestedflow.heat_rpc import service

    called = set()
    for path in glob.glob(os.path.join(peer_site_packages(), "heat/api/openstack/v1/*.py")):
        with open(path) as f:
            called.update(re.findall(r"rpc_client\.([a-z_]+)\(", f.read()))
    assert len(called) > 40, called
    assert called - set(service.methods()) == set()
