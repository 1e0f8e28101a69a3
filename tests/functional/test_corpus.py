"""Real public Heat templates (tests/corpus, sources in tests/corpus/SOURCES)
run to CREATE_COMPLETE, give their outputs and delete, with cloud types
mapped to OS::Heat::None by wildcard registry entries; the templates Heat
itself refuses are refused before anything is stored.

Templates of one source run four at a time on one engine (each is its own
stack), so the ~430 templates take about a minute."""

import concurrent.futures
import pathlib
import sys

import pytest
import yaml

from nestedflow import exceptions

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "corpus"))
import harness  # noqa: E402

ENTRIES = harness.load_manifest()["templates"]
PASSING = [e for e in ENTRIES if e.get("result") == "pass"]
REJECTED = [e for e in ENTRIES if "heat_rejects" in e]
SOURCES = sorted({e["template"].split("/")[0] for e in PASSING})


@pytest.fixture(scope="module")
def corpus_engine(tmp_path_factory):
    import nestedflow

    engine = nestedflow.Engine(
        db_url=f"sqlite:///{tmp_path_factory.mktemp('corpus')}/corpus.db")
    yield engine
    engine.close()


def test_corpus_size():
    """At least 100 real templates from at least three public sources pass."""
    assert len(PASSING) >= 100 and len(SOURCES) >= 3, (len(PASSING), SOURCES)


def _run_one(engine, known, index, entry):
    """None if the template ran as it should, else why not."""
    name = f"corpus-{index}"
    try:
        created, deleted = harness.run(engine, name, entry, known)
    except exceptions.NestedflowError as error:
        return f"refused: {error}"
    if (created.action, created.status) != ("CREATE", "COMPLETE"):
        return f"create: {created.action}_{created.status}: {created.status_reason}"
    declared = yaml.safe_load((harness.ROOT / entry["template"]).read_text()).get("outputs")
    if set(created.outputs or {}) != set(declared or {}):
        return f"outputs {sorted(created.outputs or {})} != declared {sorted(declared or {})}"
    if (deleted.action, deleted.status) != ("DELETE", "COMPLETE"):
        return f"delete: {deleted.action}_{deleted.status}: {deleted.status_reason}"
    return None


@pytest.mark.parametrize("source", SOURCES)
def test_templates_run(corpus_engine, source):
    known = set(corpus_engine.registry.names())
    entries = [e for e in PASSING if e["template"].startswith(source + "/")]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = pool.map(lambda item: _run_one(corpus_engine, known, *item),
                           enumerate(entries, ENTRIES.index(entries[0])))
        failures = {e["template"]: why for e, why in zip(entries, results, strict=True) if why}
    assert not failures, "\n".join(f"{t}: {why}" for t, why in failures.items())


@pytest.mark.parametrize("entry", REJECTED, ids=[e["template"] for e in REJECTED])
def test_heat_rejects(corpus_engine, entry):
    before = len(corpus_engine.list_stacks())
    with pytest.raises(exceptions.StackValidationFailed):
        harness.run(corpus_engine, "rejected", entry, set(corpus_engine.registry.names()))
    assert len(corpus_engine.list_stacks()) == before
