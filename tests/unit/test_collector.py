"""The garbage collector pause around flow builds."""

import gc
import threading

import pytest

from nestedflow.taskflow import collector


@pytest.fixture(autouse=True)
def _collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_collection_resumes_when_the_last_overlapping_build_ends():
    inside, release = threading.Event(), threading.Event()

    def other_build():
        with collector.paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other_build)
    with collector.paused():
        assert not gc.isenabled()
        thread.start()
        assert inside.wait(5)
    # This build ended, the other has not.
    assert not gc.isenabled()
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    with collector.paused():
        with collector.paused():
            pass
    assert not gc.isenabled()


def test_collection_resumes_after_a_failed_build():
    with pytest.raises(RuntimeError):
        with collector.paused():
            raise RuntimeError("the template was bad")
    assert gc.isenabled()


_FREEZE_PROBE = """
import gc, sys
import nestedflow
from nestedflow.conf import CONF
CONF([], project="nestedflow", default_config_files=[])
CONF.set_override("freeze_startup_objects", sys.argv[2] == "on", group="engine")
before = gc.get_freeze_count()
engine = nestedflow.Engine(db_url=sys.argv[1])
engine.registry  # loads what runs traversals
first = gc.get_freeze_count()
nestedflow.Engine(db_url=sys.argv[1]).registry
print(before, first, gc.get_freeze_count())
"""


@pytest.mark.parametrize("option", ["on", "off"])
def test_an_engine_freezes_what_is_loaded_once_per_process(tmp_path, option):
    """``[engine] freeze_startup_objects``: the first engine built freezes
    what is alive then (modules, plugins); a second engine in the same
    process freezes nothing more (it would freeze the garbage left since)."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'freeze.db'}"
    out = subprocess.run([sys.executable, "-c", _FREEZE_PROBE, url, option],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    before, first, second = map(int, out.split())
    assert before == 0
    if option == "on":
        assert first > 50_000  # what an engine loads: imports, plugins
        # A second freeze would take the second engine's objects too (tens
        # of thousands); the count moves only by a few objects CPython
        # itself re-links.
        assert abs(second - first) < 1_000
    else:
        assert first == second == 0
