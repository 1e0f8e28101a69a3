"""The convergence PoC's TODO items (examples/convergence/) replayed
deterministically: the overlaps happen at exactly the named task on every
run, and every settled state is checked against reality in full.
tests/functional/test_convergence_examples.py plays every demonstration
with real threads."""

import pathlib

import pytest

from nestedflow.conf import CONF
from nestedflow.template import loader
from scenario import scenarios

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "convergence"
TEMPLATES = {name: loader.load((EXAMPLES / f"{name}.yaml").read_text())
             for name in ("create", "update_in_place", "replace", "fail")}

POC = [
    scenarios.Scenario("failure with rollback", TEMPLATES, [
        ("create", "create"), ("settle",), ("update", "fail"), ("settle",),
        ("expect", "ROLLBACK_COMPLETE", "create")]),
    scenarios.Scenario("update with no actual change", TEMPLATES, [
        ("create", "create"), ("settle",), ("update", "create"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "create")]),
    scenarios.Scenario("second update while the first replaces", TEMPLATES, [
        ("create", "create"), ("settle",), ("update", "replace"), ("until", "update dummy1"),
        ("update", "update_in_place"), ("settle",),
        ("expect", "UPDATE_COMPLETE", "update_in_place")]),
    scenarios.Scenario("rollback while a concurrent update is in flight", TEMPLATES, [
        ("create", "create"), ("settle",), ("update", "replace"), ("until", "update dummy1"),
        ("update", "fail"), ("settle",), ("expect", "ROLLBACK_COMPLETE", "replace")]),
]


@pytest.fixture(autouse=True)
def instant_dummy():
    CONF.set_override("min_wait_secs", 0, group="dummy")
    CONF.set_override("max_wait_secs", 0, group="dummy")
    yield
    CONF.clear_override("min_wait_secs", group="dummy")
    CONF.clear_override("max_wait_secs", group="dummy")


@pytest.mark.parametrize("scenario", POC, ids=str)
def test_poc_scenario(sim, scenario):
    scenarios.SimDriver(sim).play(scenario)
