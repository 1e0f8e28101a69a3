"""Engine.validate_template answers as Heat's EngineService.validate_template
(heat/engine/service.py; parameter format from heat/engine/api.py
format_validate_parameter, key names from heat/rpc/api.py)."""


import pytest

from nestedflow import exceptions, testing

TEMPLATE = """
heat_template_version: 2018-08-31
description: a web tier
parameter_groups:
- label: sizing
  parameters: [flavor, count]
parameters:
  flavor:
    type: string
    label: Flavor
    description: the size
    constraints:
    - allowed_values: [m1.small, m1.large]
      description: pick one
  count:
    type: number
    default: 2
    constraints: [{range: {min: 1, max: 5}}]
  key:
    type: string
    hidden: true
    default: secret
    tags: [ssh]
conditions:
  big: {equals: [{get_param: flavor}, m1.large]}
resources:
  server: {type: OS::Nova::Server, condition: big, properties: {flavor: {get_param: flavor}}}
outputs:
  name: {value: {get_attr: [server, name]}, condition: big}
"""
WILDCARD = {"resource_registry": {"OS::Nova::Server": "OS::Heat::None"}}


def test_validate_answers_heats_format_and_stores_nothing(sqlite_engine):
    before = testing.stored_rows(sqlite_engine)
    answer = sqlite_engine.validate_template(TEMPLATE, environment=WILDCARD)
    assert answer["Description"] == "a web tier"
    assert answer["Parameters"]["flavor"] == {
        "Type": "String", "Description": "the size", "NoEcho": "false", "Label": "Flavor",
        "AllowedValues": ["m1.small", "m1.large"], "ConstraintDescription": "pick one"}
    assert answer["Parameters"]["count"] == {
        "Type": "Number", "Description": "", "NoEcho": "false", "Label": "count",
        "Default": 2, "MinValue": 1, "MaxValue": 5}
    assert answer["Parameters"]["key"]["NoEcho"] == "true"
    assert answer["Parameters"]["key"]["Tags"] == ["ssh"]
    assert answer["ParameterGroups"] == [{"label": "sizing", "parameters": ["flavor", "count"]}]
    assert answer["Environment"]["resource_registry"] == WILDCARD["resource_registry"]
    with_value = sqlite_engine.validate_template(TEMPLATE, environment=WILDCARD,
                                                 parameters={"flavor": "m1.large"})
    assert with_value["Parameters"]["flavor"]["Value"] == "m1.large"
    assert testing.stored_rows(sqlite_engine) == before


@pytest.mark.parametrize("environment, parameters, path, fragment", [
    (None, None, "resources.server.type", "unknown resource type 'OS::Nova::Server'"),
    (WILDCARD, {"flavor": "m1.huge"}, "parameters.flavor", "m1.huge"),
    (WILDCARD, {"nope": 1}, "parameters.nope", "unknown parameter"),
])
def test_validate_refuses_with_the_path(sqlite_engine, environment, parameters, path, fragment):
    with pytest.raises(exceptions.StackValidationFailed) as info:
        sqlite_engine.validate_template(TEMPLATE, environment=environment,
                                        parameters=parameters)
    assert info.value.path == path
    assert fragment in str(info.value)
