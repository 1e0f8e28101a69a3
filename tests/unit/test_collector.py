"""The garbage collector pause around flow builds."""

import gc
import threading

import pytest

from nestedflow.flows import collector


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
