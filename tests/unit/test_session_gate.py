"""The gate a conductor's database calls wait at while its ZooKeeper
session is in doubt (db.session_gate); the whole path is driven by
tests/functional/test_partitions.py's ZooKeeper cut."""

import threading

import pytest

from nestedflow import exceptions
from nestedflow.db import api, session_gate


def _held(gate):
    """A call waiting at ``gate`` on a thread of its own; what it ended with."""
    outcome = {}

    def call():
        try:
            gate.wait()
            outcome["passed"] = True
        except exceptions.OwnershipLost as error:
            outcome["lost"] = error
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread, outcome


def test_calls_pass_an_open_gate():
    gate = session_gate.SessionGate()
    gate.wait()
    gate.resume()  # resuming what was never suspended changes nothing
    gate.renew()
    assert gate.state == session_gate.OPEN


def test_a_suspended_session_holds_calls_until_it_is_back():
    gate = session_gate.SessionGate()
    gate.suspend()
    thread, outcome = _held(gate)
    thread.join(0.2)
    assert thread.is_alive() and not outcome
    gate.resume()
    thread.join(5)
    assert outcome == {"passed": True}


def test_a_lost_session_fails_the_held_calls_once_renewed():
    gate = session_gate.SessionGate()
    gate.suspend()
    thread, outcome = _held(gate)
    gate.lose()
    gate.resume()  # kazoo's CONNECTED of the new session: still held
    thread.join(0.2)
    assert thread.is_alive() and not outcome
    gate.renew()
    thread.join(5)
    assert isinstance(outcome.get("lost"), exceptions.OwnershipLost)
    gate.wait()  # the new session's calls pass


def test_every_guarded_database_call_waits_at_the_gate(tmp_path):
    db = api.Database(f"sqlite:///{tmp_path}/gate.sqlite")
    db.sync()
    db.gate = session_gate.SessionGate()
    db.gate.lose()
    outcome = {}

    def call():
        with pytest.raises(exceptions.OwnershipLost):
            db.list_stacks()
        outcome["failed"] = True
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()
    db.gate.renew()
    thread.join(5)
    assert outcome == {"failed": True}
    assert db.list_stacks() == []
    db.dispose()


def test_the_conductors_own_calls_pass_a_closed_gate():
    gate = session_gate.SessionGate()
    gate.lose()
    with gate.passing():
        gate.wait()
    thread, outcome = _held(gate)  # another thread's calls are still held
    thread.join(0.2)
    assert thread.is_alive()
    gate.renew()
    thread.join(5)
    assert "lost" in outcome
