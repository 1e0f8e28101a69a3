"""The heat-engines bench row through Heat itself, at a tiny size: nestedflow,
Heat 27's legacy engine and its convergence engine each create 10
``OS::Heat::None`` on an SQLite file, Heat's in the peer virtualenv's python
(``tools/heat-peer.sh``, installed here if missing), and the table shows all
three with the ratios. About 40 s on two cores, most of it Heat's imports.
"""

import json
import os
import subprocess
import sys

from tests.functional import heat_plugin_files

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_heat_engines_row_at_ten_resources(tmp_path):
    heat_plugin_files.heat_package()  # installs the peer virtualenv if needed
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--cases", "heat-engines", "--db", "sqlite",
         "--json", str(out)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    row, = json.loads(out.read_text())["rows"]
    assert row["status"] == "ok", row.get("note")
    assert row["peer_errors"] == {}
    for impl in ("heat-legacy", "heat-convergence"):
        run, = row["peer_runs"][impl]
        # Heat's create, its validation apart, and the whole process's CPU.
        assert run["elapsed_s"] > 0 and run["validate_s"] > 0 and run["cpu_s"] > 0
        assert run["total_s"] >= run["elapsed_s"] + run["validate_s"] * 0.99
        assert row["vs_peers"][impl] > 0
        # Heat stored what it created: 10 resources' rows and their events.
        assert run["sql_by_kind"]["INSERT resource"] == 10
    assert "Heat legacy" in done.stdout and "Heat convergence" in done.stdout
    assert "nestedflow" in done.stdout and "validate)" in done.stdout
