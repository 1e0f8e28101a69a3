"""``python -m bench.heat_api`` at a tiny size, through the real heat-api and
nestedflow-engine on RabbitMQ: the embedded create, the create through
heat-api woken by the engine's stack notification and the polled one all
complete, and the show and list latencies are printed (issue 28's bench).
"""

import os
import re
import subprocess
import sys

from tests.functional import heat_plugin_files

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_heat_api_bench_at_twenty_resources(tmp_path, pg_url):
    heat_plugin_files.heat_package()  # installs the peer virtualenv if needed
    done = subprocess.run(
        [sys.executable, "-m", "bench.heat_api", "--resources", "20", "--stacks", "5",
         "--calls", "5", "--list-calls", "3", "--runs", "2", "--db-url", pg_url],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    seconds = dict(re.findall(r"^  (embedded Engine|heat-api REST, \w+).*?([\d.]+) s", out,
                              re.MULTILINE))
    assert set(seconds) == {"embedded Engine", "heat-api REST, woken",
                            "heat-api REST, polled"}, out
    assert all(float(value) > 0 for value in seconds.values()), out
    listed = re.search(r"GET /v1/admin/stacks, (\d+) stacks .*p50 ([\d.]+) ms", out)
    assert listed and int(listed.group(1)) >= 5, out
    assert re.search(r"GET /v1/admin/stacks/\{name\}/\{id\} \(5 calls\): p50 [\d.]+ ms", out), out
