"""Sections of the docs that a tool generates: the text between two marker
comments, replaced by what the code (or a manifest) says, so a page cannot
drift from it. Shared by the ``tools/gen_*.py`` generators."""


def splice(text, begin, end, body):
    """``text`` with what lies between the ``begin`` and ``end`` lines replaced by ``body``."""
    start = text.index(begin) + len(begin)
    return text[:start] + "\n" + body + "\n" + text[text.index(end):]


def main(doc, render, argv):
    """Rewrite ``doc`` with ``render(text)``; with ``--check``, only exit 1 if stale."""
    text = doc.read_text()
    new = render(text)
    if "--check" in argv:
        return 0 if new == text else 1
    doc.write_text(new)
    return 0
