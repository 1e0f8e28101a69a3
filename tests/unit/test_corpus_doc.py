"""doc/source/corpus.rst states the corpus counts and exceptions the manifest holds."""


import docutils.core
import docutils.nodes
import docutils.utils
import pytest


def test_committed_section_equals_the_generated_one(doc_tool):
    tool = doc_tool("gen_corpus_table")
    text = tool.DOC.read_text()
    assert tool.render(text) == text, "run tools/gen_corpus_table.py"


def test_counts_are_the_lists_test_corpus_runs(doc_tool):
    tool = doc_tool("gen_corpus_table")
    entries = tool.load_entries()
    counts, refused = tool.classify(entries)
    # The same selections tests/functional/test_corpus.py parametrizes over.
    assert sum(c["run"] for c in counts.values()) == len(
        [e for e in entries if e.get("result") == "pass"])
    assert refused == [e for e in entries if "heat_rejects" in e]
    # Issue 18: at least 100 templates from at least three sources run.
    assert sum(c["run"] for c in counts.values()) >= 100
    assert len([s for s, c in counts.items() if c["run"]]) >= 3
    assert "heat-agents" in tool.source_names() and "heat-agents" not in counts


@pytest.mark.parametrize("entry", [
    {"template": "src/untested.yaml", "result": "create: CREATE_FAILED"},
    {"template": "src/both.yaml", "result": "pass", "heat_rejects": "why"},
    {"template": "src/no-reason.yaml", "result": "refused", "heat_rejects": " "},
])
def test_an_entry_no_test_covers_is_not_counted(entry, doc_tool):
    with pytest.raises(ValueError, match=entry["template"]):
        doc_tool("gen_corpus_table").classify(
            [{"template": "src/a.yaml", "result": "pass"}, entry])


@pytest.mark.parametrize("reason", [
    "- get_attr of *x* |y| `z` a_ [1]_ C:\\path (Heat: 'Invalid default')",
    "b. looks like a list item",
    "#. so does this",
])
def test_reasons_render_verbatim_whatever_markup_they_quote(reason, doc_tool):
    section = doc_tool("gen_corpus_table").section_rst(
        [{"template": "src/a_b.yaml", "result": "refused", "heat_rejects": reason},
         {"template": "src/ok.yaml", "result": "pass"}], ["src", "files-only"])
    doctree = docutils.core.publish_doctree(
        section, settings_overrides={"halt_level": docutils.utils.Reporter.SEVERE_LEVEL + 1,
                                     "warning_stream": False})
    assert [m.astext() for m in doctree.findall(docutils.nodes.system_message)
            if m["level"] >= docutils.utils.Reporter.WARNING_LEVEL] == []
    text = doctree.astext()
    assert reason in text and "src/a_b.yaml" in text
    assert "files-only." in text
