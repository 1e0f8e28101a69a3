"""doc/source/cli.rst's command reference is what the commands are."""


def test_committed_reference_equals_the_generated_one(doc_tool):
    tool = doc_tool("gen_cli_reference")
    text = tool.DOC.read_text()
    assert tool.render(text) == text, "run tools/gen_cli_reference.py"


def test_every_command_and_heatclient_status_is_listed(doc_tool):
    tool = doc_tool("gen_cli_reference")
    reference = tool.reference()
    for name in tool.commands():
        assert f"``{name}``" in reference
    # A heatclient command nestedflow answers names it; the others say so.
    assert "``stack failures list``                   ``nestedflow stack failures list``" \
        in reference
    for name in tool.HEATCLIENT:
        assert (f"``nestedflow {name}``" in reference) == (name in tool.commands())
