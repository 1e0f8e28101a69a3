"""Every public method of ``Database`` is retried on a dropped connection
but the few that cannot be (Database.UNGUARDED): the rule, so that a new
method cannot be forgotten as the listing of a stack's children was
(tests/functional/test_fault_injection.py drives it against a server)."""

import inspect

import pytest
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from nestedflow.db import api, retrying


def _public_methods(cls):
    return {name for name in dir(cls) if not name.startswith("_")
            and inspect.isfunction(inspect.getattr_static(cls, name))}


def test_every_public_method_but_the_exempt_is_retried():
    methods = _public_methods(api.Database)
    assert api.Database.UNGUARDED <= methods, api.Database.UNGUARDED - methods  # no stale name
    unwrapped = {name for name in methods - api.Database.UNGUARDED
                 if not hasattr(getattr(api.Database, name), "__wrapped__")}
    assert not unwrapped
    assert "list_children" in methods - api.Database.UNGUARDED


class _Gone(Exception):
    pgcode = None


def test_a_dropped_connection_is_tried_again_and_other_errors_are_not(monkeypatch):
    monkeypatch.setattr(retrying, "RETRY_INTERVAL", 0.001)
    calls = []

    class Store(retrying.Guarded):
        def read(self, fail_times, error):
            calls.append(1)
            if len(calls) <= fail_times:
                raise error
            return "row"

    dropped = db_exc.DBConnectionError(sa_exc.OperationalError("SELECT", {}, _Gone()))
    assert Store().read(2, dropped) == "row"
    assert len(calls) == 3

    calls.clear()
    with pytest.raises(ValueError):
        Store().read(1, ValueError("not a disconnect"))
    assert len(calls) == 1


def test_taskflows_journal_reads_and_writes_are_retried(tmp_path):
    from taskflow.persistence.backends import impl_sqlalchemy

    from nestedflow.taskflow import sql_backend as taskflow_backend

    stock = {name for name in vars(impl_sqlalchemy.Connection)
             if name.startswith(("get_", "save_", "update_", "destroy_"))}
    assert stock == set(taskflow_backend.RETRIED)  # TaskFlow added none we miss
    db = api.Database(f"sqlite:///{tmp_path}/journal.sqlite")
    conn = taskflow_backend.TaskflowBackend.for_database(db).get_connection()
    assert all(hasattr(getattr(conn, name), "__wrapped__") for name in taskflow_backend.RETRIED)
    db.dispose()


def test_the_stores_over_the_database_are_guarded_as_it_is():
    from nestedflow.db import physical, snapshots, software_config

    for store in (physical.PhysicalStore, snapshots.SnapshotStore, snapshots.TagStore,
                  software_config.SoftwareConfigStore):
        methods = _public_methods(store)
        assert methods, store
        unguarded = {name for name in methods
                     if not getattr(getattr(store, name), "guarded", False)}
        assert not unguarded, (store, unguarded)


def test_a_name_in_unguarded_is_left_as_it_is():
    class Store(retrying.Guarded):
        UNGUARDED = frozenset({"scope"})

        def scope(self):
            return "scope"

        def read(self):
            return "row"

    assert not hasattr(Store.scope, "guarded")
    assert Store.read.guarded and Store().read() == "row"
