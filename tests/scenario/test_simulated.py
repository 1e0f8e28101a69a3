"""Every scenario, replayed deterministically by the simulation."""

import pytest

from scenario import scenarios


@pytest.mark.parametrize("scenario", scenarios.SCENARIOS, ids=str)
def test_scenario(sim, scenario):
    scenarios.SimDriver(sim).play(scenario)
