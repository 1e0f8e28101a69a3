"""Templates for the ``validate`` case: a large real one and generated ones.

The real template is TripleO's nova-compute service (tests/corpus, 73 KB,
13 conditions, outputs full of str_replace / map_merge / if / yaql, four
nested templates), validated with the files and parameter_defaults the
corpus manifest gives it. The generated ones have N resources, each with a
condition built from other conditions and parameters, a yaql expression,
an ``if`` and string functions, so validation time per resource covers
the functions real templates use.
"""

import yaml

from bench import corpus

REAL = "tripleo-heat-templates/deployment/nova/nova-compute-container-puppet.yaml"


def real(known_types):
    """(template text, files, environment, parameters, resource count); cloud
    types not in ``known_types`` are mapped to OS::Heat::None as the corpus
    test does (bench.corpus)."""
    text, files, environment, parameters = corpus.inputs(
        REAL, corpus.kept_types(REAL, known_types))
    resources = len(yaml.safe_load(text).get("resources") or {})
    return text, files, environment, parameters, resources


def generated(n):
    """A 2021-04-16 template of ``n`` resources with conditions and yaql."""
    conditions = {
        "is_prod": {"equals": [{"get_param": "env"}, "prod"]},
        "is_big": {"not": {"equals": [{"get_param": "size"}, 0]}},
        "prod_and_big": {"and": ["is_prod", "is_big"]},
        "either": {"or": ["is_prod", {"contains": ["b", {"get_param": "tags"}]}]},
    }
    names = list(conditions)
    resources = {}
    for i in range(n):
        previous = f"r{i - 1}" if i else None
        value = {
            "if": [
                names[i % len(names)],
                {"yaql": {"expression": "$.data.prefix + str($.data.i * 2)",
                          "data": {"prefix": {"get_param": "prefix"}, "i": i}}},
                {"str_replace": {"template": "item-$i-$env",
                                 "params": {"$i": str(i), "$env": {"get_param": "env"}}}},
            ]
        }
        properties = {"value": {"list_join": ["/", [value,
                                                     {"get_param": "prefix"}]]}}
        if previous is not None:
            properties["update_replace_value"] = {"get_resource": previous}
        resources[f"r{i}"] = {
            "type": "OS::Heat::TestResource",
            "condition": names[(i + 1) % len(names)] if i % 5 == 0 else None,
            "properties": properties,
        }
        if resources[f"r{i}"]["condition"] is None:
            del resources[f"r{i}"]["condition"]
        if previous is not None and i % 5 == 1:
            # r{i-1} may be conditional: read it only where it exists.
            properties["update_replace_value"] = {
                "if": [names[i % len(names)], "none", "none"]}
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {
            "env": {"type": "string", "default": "prod"},
            "size": {"type": "number", "default": 3},
            "prefix": {"type": "string", "default": "p-"},
            "tags": {"type": "comma_delimited_list", "default": "a,b,c"},
        },
        "conditions": conditions,
        "resources": resources,
        "outputs": {
            "first": {"value": {"get_attr": ["r1", "output"]}},
            "count": {"value": {"yaql": {"expression": "len($.data)",
                                         "data": [f"r{i}" for i in range(n)]}}},
        },
    }
