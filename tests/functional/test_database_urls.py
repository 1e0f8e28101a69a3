"""Database URLs without a driver, as the README writes them.

SQLAlchemy 2.1 maps ``postgresql://`` to psycopg (3) and ``mysql://`` to
mysqlclient (MySQLdb); nestedflow's extras install psycopg2 and PyMySQL. A
URL naming no driver uses the installed one; a driver that is not installed
is one line naming the extra to install, not a ModuleNotFoundError.
"""

import importlib.util
import os
import re

import pytest
import sqlalchemy as sa

import nestedflow
from nestedflow import exceptions
from nestedflow.db import migration

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"a": {"type": "OS::Heat::None"}}}


def _readme_scheme():
    with open(os.path.join(ROOT, "README.md")) as handle:
        text = handle.read()
    (scheme,) = re.findall(r'Engine\(db_url="(\w[\w+]*)://', text)
    return scheme


def _without_driver(url, scheme):
    return sa.engine.make_url(url).set(drivername=scheme).render_as_string(hide_password=False)


def test_the_readme_form_runs_a_stack(pg_url, stack_name):
    scheme = _readme_scheme()
    assert scheme == "postgresql"
    url = _without_driver(pg_url, scheme)
    with nestedflow.Engine(db_url=url) as engine:
        engine.create_stack(stack_name, TEMPLATE)
        assert engine.wait(stack_name, timeout=60).status == "COMPLETE"


def test_every_server_without_a_driver_runs_a_stack(shared_db_url, stack_name):
    if not shared_db_url.startswith("mysql"):
        shared_db_url = _without_driver(shared_db_url, "postgresql")
    else:
        shared_db_url = _without_driver(shared_db_url, "mysql")
    with nestedflow.Engine(db_url=shared_db_url) as engine:
        engine.create_stack(stack_name, TEMPLATE)
        assert engine.wait(stack_name, timeout=60).status == "COMPLETE"


@pytest.mark.parametrize("scheme, installed", [
    ("postgresql", "psycopg2"), ("mysql", "pymysql"), ("mariadb", "pymysql")])
def test_a_url_without_a_driver_names_the_installed_one(scheme, installed):
    url = migration.normalize_url(f"{scheme}://u@db.example.com/nf")
    assert sa.engine.make_url(url).drivername == f"{scheme}+{installed}"


def test_a_driver_not_installed_is_one_line_naming_the_extra():
    assert importlib.util.find_spec("pg8000") is None
    with pytest.raises(exceptions.DatabaseUnavailable) as info:
        nestedflow.Engine(db_url="postgresql+pg8000://u@127.0.0.1:5432/nf")
    message = str(info.value)
    assert "pg8000" in message and "nestedflow[postgresql]" in message
    assert "\n" not in message
