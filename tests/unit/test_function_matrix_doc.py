"""doc/source/templates.rst holds the function/version matrix as the code makes it."""


def test_committed_matrix_equals_the_generated_one(doc_tool):
    tool = doc_tool("gen_function_matrix")
    text = tool.DOC.read_text()
    assert tool.render(text) == text, "run tools/gen_function_matrix.py"


def test_matrix_rows_follow_the_tables():
    from nestedflow.template.functions.versions import HOT_VERSIONS, matrix

    table = matrix()
    assert [table[v].get("yaql") for v in HOT_VERSIONS[4:]] == [
        None, "yes", "yes", "yes, condition", "yes, condition", "yes, condition",
        "yes, condition"]
    assert [table[v]["Fn::Select"] for v in HOT_VERSIONS] == ["yes"] * 3 + ["removed"] * 8
