"""The convergence scenarios of tests/scenario on the normal embedded engine:
TaskFlow's parallel engine in real threads, on PostgreSQL and MariaDB.

Overlaps come from timing (every test resource waits ``wait_secs``), so
only the states each ``expect`` names are checked, not the interleaving --
the deterministic interleavings are tests/scenario/test_simulated.py's job.
"""

import pytest
from scenario import scenarios


@pytest.mark.functional
@pytest.mark.parametrize("db_url", ["postgresql", "mysql"], indirect=True)
@pytest.mark.parametrize("scenario", scenarios.SCENARIOS, ids=str)
def test_scenario(engine, scenario):
    scenarios.ThreadedDriver(engine).play(scenario)
