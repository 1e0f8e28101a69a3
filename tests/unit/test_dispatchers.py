"""Dispatchers are chosen by the scheme of the jobboard URL, through the
``nestedflow.dispatchers`` entry points (as TaskFlow chooses its jobboard
backends and tooz its drivers)."""

import pytest

from nestedflow import exceptions
from nestedflow.dispatch import base
from nestedflow.dispatch.impl_local import LocalDispatcher
from nestedflow.dispatch.impl_zookeeper import JobboardDispatcher


def test_no_url_runs_in_process():
    assert base.dispatcher_class(None) is LocalDispatcher
    assert base.dispatcher_class("") is LocalDispatcher


def test_zookeeper_url_posts_jobs():
    assert base.dispatcher_class("zookeeper://127.0.0.1:2181/nf") is JobboardDispatcher


def test_unknown_scheme_is_named_with_the_known_ones():
    with pytest.raises(exceptions.NestedflowError) as raised:
        base.dispatcher_class("etcd://127.0.0.1:2379/nf")
    assert str(raised.value) == (
        "jobboard_url 'etcd://127.0.0.1:2379/nf': no dispatcher for the scheme 'etcd' "
        "(known: local, zookeeper)")


def test_an_embedded_engine_runs_traversals_in_its_own_slots(sqlite_engine):
    assert isinstance(sqlite_engine._dispatcher, LocalDispatcher)
    assert sqlite_engine.runtime.slots is not None
    assert sqlite_engine._dispatcher.runs_in_process


def test_database_outages_do_not_use_up_a_jobs_attempts():
    """SQLAlchemy's own connection errors, raised where oslo.db's filters do
    not translate them and wrapped or not, are the infrastructure's: a
    PostgreSQL restart used to use up every attempt of the jobs in flight
    (tests/functional/test_partitions.py)."""
    import sqlalchemy.exc as sa_exc
    from oslo_db import exception as db_exc

    from nestedflow.dispatch import impl_zookeeper as jobboard

    refused = sa_exc.OperationalError("SELECT 1", {}, Exception("connection refused"))
    try:
        try:
            raise refused
        except sa_exc.OperationalError as error:
            raise RuntimeError("the run failed") from error
    except RuntimeError as wrapped:
        assert jobboard.transient(wrapped)
    assert jobboard.transient(refused)
    assert jobboard.transient(db_exc.DBConnectionError())
    assert not jobboard.transient(ValueError("a bad template"))
    assert not jobboard.transient(sa_exc.IntegrityError("INSERT", {}, Exception("dup")))
