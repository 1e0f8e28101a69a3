"""The corpus-tree bench rows without running them: the case is listed, its
trees' templates and environments load and validate, the types are mapped
as the corpus tests map them, and Heat's tree that cannot run says why.
No timings are asserted."""

import fnmatch

import pytest
import yaml

import nestedflow
from bench import cases, cli, corpus, corpus_tree, nf, validation

TREES = (corpus_tree.LARGEST, corpus_tree.HEAT_LARGEST)


def test_case_is_listed_with_both_trees_create_and_delete(capsys):
    assert cli.main(["--list"]) == 0
    assert any(line.startswith("corpus-tree ") for line in capsys.readouterr().out.splitlines())
    case = cases.BY_NAME["corpus-tree"]
    assert case.stock and case.peers == ("heat-legacy", "heat-convergence")
    assert [cases.label(case, p) for p in case.variants] == [
        "helloworld3 (35 in 6 stacks) create", "helloworld3 (35 in 6 stacks) delete",
        "sample3 (25 in 3 stacks) create", "sample3 (25 in 3 stacks) delete"]
    # The row's rates are per resource of the whole tree.
    assert {p["n"] for p in case.variants} == {35, 25}


def test_plan_keeps_the_types_nestedflow_implements():
    args = cli.parse_args(["--cases", "corpus-tree", "--db", "sqlite"])
    rows = cli.plan(args)
    assert len(rows) == 4
    kept = {row["params"]["template"]: row["params"]["kept"] for row in rows}
    assert kept[corpus_tree.LARGEST] == ["OS::Heat::AutoScalingGroup",
                                         "OS::Heat::ScalingPolicy"]
    assert kept[corpus_tree.HEAT_LARGEST] == []
    # Both trees share the stock baseline of their create and delete.
    keys = {cases.stock_key(cases.BY_NAME["corpus-tree"], r["params"], "sqlite", 8)
            for r in rows}
    assert len(keys) == 2


@pytest.mark.parametrize("template", TREES)
def test_tree_loads_with_the_corpus_mapping_and_validates(template, tmp_path):
    kept = corpus.kept_types(template, nf.resource_types())
    text, files, environment, parameters = corpus.inputs(template, kept)
    assert yaml.safe_load(text)["resources"]
    # The nested templates the tree's resources are.
    assert files and all(name.endswith(".yaml") for name in files)
    registry = environment["resource_registry"]
    for type_name in corpus.entry(template)["types"]:
        if type_name in kept:
            assert not any(fnmatch.fnmatchcase(type_name, key) for key in registry)
        else:  # a wildcard key, as Heat's GlobResourceInfo matches it
            assert any(fnmatch.fnmatchcase(type_name, key) and value == "OS::Heat::None"
                       for key, value in registry.items())
    assert environment["parameter_defaults"]
    engine = nestedflow.Engine(db_url=f"sqlite:///{tmp_path}/validate.db")
    try:
        engine.validate_template(text, files=files, environment=environment,
                                 parameters=parameters)
    finally:
        engine.close()


def test_heat_is_not_run_on_the_tree_it_cannot_create():
    params = {**corpus_tree.variants()[0], "kept": []}
    assert params["template"] in corpus_tree.HEAT_CANNOT
    with pytest.raises(nf.NotAvailable, match="Keystone"):
        corpus_tree.run_heat({"params": params, "impl": "heat-legacy"}, "sqlite://", None)
    assert corpus_tree.HEAT_LARGEST not in corpus_tree.HEAT_CANNOT


def test_validate_case_still_reads_its_real_template_through_the_harness():
    text, files, environment, _, resources = validation.real(nf.resource_types())
    assert resources > 0 and files
    assert "OS::Heat::None" in environment["resource_registry"].values()
