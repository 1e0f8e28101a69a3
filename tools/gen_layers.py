#!/usr/bin/env python3
"""Rewrite the package layers in doc/source/architecture.rst from the contracts.

    .venv/bin/python tools/gen_layers.py          # rewrite the file
    .venv/bin/python tools/gen_layers.py --check  # exit 1 if stale

The layers are import-linter's ``layers`` contract in pyproject.toml
(``[tool.importlinter]``), which the unit tests enforce
(tests/unit/test_architecture.py); what each package owns is the first
paragraph of its docstring. So the page says what the code keeps, and
tests/unit/test_architecture.py fails when it does not. Run it after
changing a layer or a package's docstring.
"""

import ast
import pathlib
import re
import sys
import textwrap
import tomllib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import doc_sections  # noqa: E402 - a sibling of this script, not a package

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN = ".. BEGIN GENERATED: layers (tools/gen_layers.py)\n"
END = ".. END GENERATED: layers\n"
DOC = ROOT / "doc" / "source" / "architecture.rst"
PACKAGE = ROOT / "nestedflow"


def contracts():
    """The import-linter contracts of pyproject.toml, by id."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def layers():
    """The layers, top first: each a list of the packages (or modules) in it."""
    return [[name.strip() for name in layer.split("|")]
            for layer in contracts()["layers"]["layers"]]


def summary(name):
    """The first paragraph of the package's (or module's) docstring, on one line."""
    path = PACKAGE / name / "__init__.py"
    if not path.exists():
        path = PACKAGE / f"{name}.py"
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    # Cross-reference roles name things relative to the package: plain here.
    text = re.sub(r":(?:mod|class|func|meth):`~?\.?([^`]+)`", r"``\1``", docstring)
    return " ".join(text.split("\n\n")[0].split())


def render(text):
    diagram = ["Layers, top first (each imports only from the layers below it; packages",
               "side by side on one line do not import each other)::", ""]
    width = max(len(" | ".join(layer)) for layer in layers())
    for index, layer in enumerate(layers()):
        diagram.append("    " + " | ".join(layer).center(width).rstrip())
        if index < len(layers()) - 1:
            diagram.append("    " + "v".center(width).rstrip())
    owners = []
    for layer in layers():
        for name in layer:
            owners.append(f"``{name}``")
            owners.extend(textwrap.wrap(summary(name), 76, initial_indent="    ",
                                        subsequent_indent="    "))
    body = "\n".join(diagram) + "\n\n" + "\n".join(owners) + "\n"
    return doc_sections.splice(text, BEGIN, END, body)


if __name__ == "__main__":
    sys.exit(doc_sections.main(DOC, render, sys.argv[1:]))
