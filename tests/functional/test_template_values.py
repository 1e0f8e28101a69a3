"""Templates, environments and parameters given as Python objects carry
values JSON cannot store: each is refused before anything is stored, with
StackValidationFailed naming where it is -- never a database error.

Heat's engine reads a template version only from a string value
(heat/engine/template.py ``get_version``: candidate keys are those whose
value ``isinstance(v, str)``; otherwise ``InvalidTemplateVersion``), so a
``yaml.safe_load`` dict whose ``heat_template_version`` became a
``datetime.date`` is refused, not converted.
"""

import datetime
import decimal

import pytest
import sqlalchemy as sa
import yaml

from nestedflow import exceptions

SAFE_LOADED = yaml.safe_load("""
heat_template_version: 2017-02-24
resources:
  a: {type: OS::Heat::None}
""")


def _template(value):
    return {"heat_template_version": "2018-08-31",
            "parameters": {"p": {"type": "json", "default": {}}},
            "resources": {"a": {"type": "OS::Heat::None", "properties": {"v": value}}}}


def _stored_templates(url):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql("SELECT count(*) FROM raw_templates").scalar()
    finally:
        engine.dispose()


def test_safe_loaded_date_version_is_refused_with_a_hint(engine, db_url, stack_name):
    assert isinstance(SAFE_LOADED["heat_template_version"], datetime.date)
    before = _stored_templates(db_url)
    with pytest.raises(exceptions.StackValidationFailed) as info:
        engine.create_stack(stack_name, SAFE_LOADED)
    message = str(info.value)
    assert "heat_template_version" in message
    assert "quote" in message and "YAML text" in message
    assert "\n" not in message
    assert stack_name not in [s.name for s in engine.list_stacks()]
    assert _stored_templates(db_url) == before
    # The same name is free, and the quoted version works.
    fixed = dict(SAFE_LOADED, heat_template_version="2017-02-24")
    engine.create_stack(stack_name, fixed)
    assert engine.wait(stack_name, timeout=60).status == "COMPLETE"


@pytest.mark.parametrize("value, named", [
    (datetime.date(2020, 1, 1), "date"),
    (datetime.datetime(2020, 1, 1, 12, 0), "datetime"),
    ({1, 2}, "set"),
    (b"bytes", "bytes"),
    (float("nan"), "nan"),
    (float("inf"), "inf"),
    (decimal.Decimal("1.5"), "Decimal"),
    (object(), "object"),
    ({(1, 2): "tuple key"}, "tuple"),
])
def test_values_json_cannot_store_are_refused(engine, db_url, stack_name, value, named):
    before = _stored_templates(db_url)
    where = [
        ("resources.a.properties.v", lambda: engine.create_stack(stack_name, _template(value))),
        ("parameter_defaults", lambda: engine.create_stack(
            stack_name, _template(1), environment={"parameter_defaults": {"p": value}})),
        ("parameters.p", lambda: engine.create_stack(
            stack_name, _template(1), parameters={"p": {"k": value}})),
    ]
    for path, call in where:
        with pytest.raises(exceptions.StackValidationFailed) as info:
            call()
        message = str(info.value)
        assert path in message, message
        assert named in message, message
        assert "\n" not in message
    assert stack_name not in [s.name for s in engine.list_stacks()]
    assert _stored_templates(db_url) == before


def test_scalar_parameter_of_a_foreign_type_is_refused(engine, stack_name):
    with pytest.raises(exceptions.StackValidationFailed) as info:
        engine.create_stack(stack_name, _template(1),
                            parameters={"p": datetime.date(2020, 1, 1)})
    assert "parameters.p" in str(info.value)
    assert stack_name not in [s.name for s in engine.list_stacks()]


def test_update_with_a_value_json_cannot_store_keeps_the_stack(engine, stack_name):
    engine.create_stack(stack_name, _template(1))
    assert engine.wait(stack_name, timeout=60).status == "COMPLETE"
    with pytest.raises(exceptions.StackValidationFailed) as info:
        engine.update_stack(stack_name, _template({1, 2}))
    assert "resources.a.properties.v" in str(info.value)
    stack = engine.get_stack(stack_name)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")
    assert engine.get_template(stack_name)["resources"]["a"]["properties"]["v"] == 1
