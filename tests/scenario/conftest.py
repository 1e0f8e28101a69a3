"""Fixtures of the scenario tests: a deterministic simulation per test."""

import pytest

from nestedflow.testing.stepped import Simulation


@pytest.fixture
def sim(sqlite_url):
    with Simulation(sqlite_url) as simulation:
        yield simulation
