#!/usr/bin/env python3
"""Rewrite the corpus counts and exceptions in doc/source/corpus.rst from the manifest.

    .venv/bin/python tools/gen_corpus_table.py          # rewrite the file
    .venv/bin/python tools/gen_corpus_table.py --check  # exit 1 if stale

The section sits between the BEGIN/END marker comments; it comes from
tests/corpus/manifest.yaml, the list tests/functional/test_corpus.py runs,
so the page cannot claim other counts than the test checks
(tests/unit/test_corpus_doc.py checks the committed section is current).
Run it after ``python tests/corpus/harness.py`` changes the manifest.
"""

import collections
import pathlib
import re
import sys
import textwrap

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import doc_sections  # noqa: E402 - a sibling of this script, not a package

BEGIN = ".. BEGIN GENERATED: corpus counts (tools/gen_corpus_table.py)\n"
END = ".. END GENERATED: corpus counts\n"
ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "doc" / "source" / "corpus.rst"
CORPUS = ROOT / "tests" / "corpus"
MANIFEST = CORPUS / "manifest.yaml"
SOURCES = CORPUS / "SOURCES"


def load_entries(path=MANIFEST):
    return yaml.safe_load(path.read_text())["templates"]


def source_names(path=SOURCES):
    """Repositories SOURCES describes: the first word of each paragraph
    that has a ``repository:`` line (a name's note may run over lines)."""
    blocks = [b.splitlines() for b in re.split(r"\n\s*\n", path.read_text())]
    return [b[0].split()[0] for b in blocks
            if any(line.strip().startswith("repository:") for line in b)]


def classify(entries):
    """{source: {"run": n, "refused": n}} and the refused entries.

    test_corpus.py runs ``result: pass`` entries and expects Heat's refusal
    for ``heat_rejects`` ones; an entry that is neither (or both) is tested
    by nothing, so the page refuses to count it rather than hide it.
    """
    counts = collections.defaultdict(collections.Counter)
    refused, untested = [], []
    for entry in entries:
        source = entry["template"].split("/")[0]
        passes, rejects = entry.get("result") == "pass", "heat_rejects" in entry
        # An exception the page cannot explain is as bad as an untested one.
        if passes == rejects or (rejects and not str(entry["heat_rejects"] or "").strip()):
            untested.append(entry["template"])
        elif passes:
            counts[source]["run"] += 1
        else:
            counts[source]["refused"] += 1
            refused.append(entry)
    if untested:
        raise ValueError("manifest entries neither passing nor marked heat_rejects "
                         "with a reason (or both): " + ", ".join(untested))
    return dict(counts), refused


def _text(value):
    # Reasons quote Heat's messages verbatim; *, `, | and _ would start
    # inline markup in a table cell.
    value = re.sub(r"\s+", " ", str(value)).strip()
    value = re.sub(r"([\\*`|_])", r"\\\1", value)
    # A cell starting "- ", "#. ", "(a) " or "b. " would be a one-item list;
    # an escaped first character is just that character.
    return "\\" + value if re.match(r"[^\w\\]|\w+[.)]\s", value) else value


def _wrap(prose):
    # Hyphens and long words stay whole: a break inside a path or an
    # inline literal would read as two words.
    return textwrap.fill(prose, 79, break_long_words=False, break_on_hyphens=False)


def _table(title, header, rows, widths):
    lines = [f".. list-table:: {title}", "   :header-rows: 1",
             f"   :widths: {' '.join(map(str, widths))}", ""]
    for row in [header, *rows]:
        first, *rest = row
        lines.append(f"   * - {first}")
        lines.extend(f"     - {cell}" for cell in rest)
    return lines


def heat_type_rows(entries, registered):
    """[type, templates using it, of which run] for each of Heat's own
    types (``OS::Heat::``) nestedflow registers that a template uses."""
    rows = []
    for type_name in sorted(t for t in registered if t.startswith("OS::Heat::")):
        using = [e for e in entries if type_name in e.get("types", ())]
        if using:
            rows.append([f"``{type_name}``", len(using),
                         sum(1 for e in using if e.get("result") == "pass")])
    return rows


def registered_types():
    """The type names the nestedflow distribution registers (its entry points)."""
    import importlib.metadata

    dist = importlib.metadata.distribution("nestedflow")
    return sorted(ep.name for ep in dist.entry_points if ep.group == "nestedflow.resources")


def section_rst(entries, sources=(), registered=()):
    counts, refused = classify(entries)
    run = sum(c["run"] for c in counts.values())
    rejected = sum(c["refused"] for c in counts.values())
    lines = [_wrap(
        f"``tests/corpus/manifest.yaml`` lists {len(entries)} distinct templates "
        f"(identical copies counted once) from {len(counts)} repositories. "
        f"**{run}** run to ``CREATE_COMPLETE``, give the outputs they declare and "
        f"delete to ``DELETE_COMPLETE`` (``test_templates_run``); **{rejected}** are "
        "refused as Heat refuses them, with nothing stored (``test_heat_rejects``). "
        "There are no other exceptions."), ""]
    lines += _table(
        "Templates per source", ["Source", "Run", "Refused as Heat refuses them", "Total"],
        [[source, c["run"], c["refused"], c["run"] + c["refused"]]
         for source, c in sorted(counts.items())]
        + [["**Total**", f"**{run}**", f"**{rejected}**", f"**{run + rejected}**"]],
        [40, 15, 30, 15])
    without = [name for name in sources if name not in counts]
    if without:
        lines += ["", _wrap("Without templates of their own (they supply files the "
                            "templates read): " + ", ".join(without) + ".")]
    type_rows = heat_type_rows(entries, registered)
    if type_rows:
        lines += ["", _wrap(
            "Heat's own types that nestedflow implements run as themselves, not as "
            "placeholders (only types nestedflow lacks are mapped to ``OS::Heat::None``); "
            "deployments waiting for their server's signal, and wait conditions' "
            "handles, are signalled by the test, as a server (its agent) would. "
            "Templates using each (in the template or a file "
            "it reads), and how many of them run:"), ""]
        lines += _table("Heat's own types in the corpus", ["Type", "Templates", "Run"],
                        type_rows, [50, 25, 25])
    lines += ["", _wrap(f"Every exception ({len(refused)}), with the reason recorded in "
                        "the manifest (``heat_rejects``):"), ""]
    lines += _table(
        "Templates Heat refuses", ["Template", "Why Heat refuses it"],
        [[f"``{e['template']}``", _text(e["heat_rejects"])]
         for e in sorted(refused, key=lambda e: e["template"])],
        [50, 50])
    return "\n".join(lines) + "\n"


def render(text, entries=None, sources=None, registered=None):
    entries = load_entries() if entries is None else entries
    sources = source_names() if sources is None else sources
    registered = registered_types() if registered is None else registered
    return doc_sections.splice(text, BEGIN, END, section_rst(entries, sources, registered))


if __name__ == "__main__":
    sys.exit(doc_sections.main(DOC, render, sys.argv[1:]))
