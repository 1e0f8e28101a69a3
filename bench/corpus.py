"""Corpus templates as the corpus tests run them, for the bench's rows.

``tests/corpus/harness.py`` is the one definition of how a corpus entry is
run: its files, its parameters, and the environment mapping its cloud types
to ``OS::Heat::None``. The bench loads that file by path (``tests`` is not a
package, and a ``tests`` package some other distribution installs could
shadow it) rather than repeating it, in our virtualenv and in Heat's peer
virtualenv alike: the harness needs only PyYAML at import.

The mapping depends on which types the engine implements (those stay real);
Heat's peer process cannot ask nestedflow's registry, so the caller passes
the kept types (``kept_types``), worked out where nestedflow is importable.
"""

import functools
import importlib.util
import pathlib

HARNESS = pathlib.Path(__file__).resolve().parent.parent / "tests" / "corpus" / "harness.py"


@functools.cache
def harness():
    spec = importlib.util.spec_from_file_location("nestedflow_corpus_harness", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _entries():
    return {entry["template"]: entry for entry in harness().load_manifest()["templates"]}


def entry(template):
    """The manifest entry of ``template`` (a path under tests/corpus)."""
    return _entries()[template]


def kept_types(template, known_types):
    """The entry's types the engine implements itself: not mapped to None."""
    return sorted(set(entry(template).get("types", ())) & set(known_types))


def inputs(template, kept):
    """(template text, files, environment, parameters) as the corpus test
    creates the entry: ``kept`` types real, the others OS::Heat::None by the
    harness's wildcard registry, its parameter_defaults in the environment."""
    found = entry(template)
    environment = harness().corpus_environment(set(found.get("types", ())), set(kept))
    if found.get("parameter_defaults"):
        environment["parameter_defaults"] = found["parameter_defaults"]
    text = (harness().ROOT / template).read_text()
    return text, harness().files_for(found), environment, found.get("parameters") or {}
