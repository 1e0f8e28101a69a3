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

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import doc_sections  # noqa: E402 - a sibling of this script, not a package

BEGIN = ".. BEGIN GENERATED: function matrix (tools/gen_function_matrix.py)\n"
END = ".. END GENERATED: function matrix\n"
DOC = pathlib.Path(__file__).resolve().parent.parent / "doc" / "source" / "templates.rst"


def render(text):
    from nestedflow.template.functions.versions import matrix_rst

    return doc_sections.splice(text, BEGIN, END, matrix_rst())


if __name__ == "__main__":
    sys.exit(doc_sections.main(DOC, render, sys.argv[1:]))
