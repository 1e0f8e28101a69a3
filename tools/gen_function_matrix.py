#!/usr/bin/env python3
"""Rewrite the function/version matrix in doc/source/templates.rst from the code.

    .venv/bin/python tools/gen_function_matrix.py          # rewrite the file
    .venv/bin/python tools/gen_function_matrix.py --check  # exit 1 if stale

The table sits between the BEGIN/END marker comments; it comes from
nestedflow.template.functions.versions.matrix_rst(), so it cannot drift from
the tables the engine uses (tests/unit/test_function_matrix_doc.py checks).
"""

import pathlib
import sys

BEGIN = ".. BEGIN GENERATED: function matrix (tools/gen_function_matrix.py)\n"
END = ".. END GENERATED: function matrix\n"
DOC = pathlib.Path(__file__).resolve().parent.parent / "doc" / "source" / "templates.rst"


def render(text):
    from nestedflow.template.functions.versions import matrix_rst

    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    return text[:start] + "\n" + matrix_rst() + "\n" + text[end:]


def main(argv):
    text = DOC.read_text()
    new = render(text)
    if "--check" in argv:
        return 0 if new == text else 1
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
