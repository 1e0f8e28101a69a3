#!/usr/bin/env python3
"""Rewrite the resource type reference in doc/source/resource-types.rst from the registry.

    .venv/bin/python tools/gen_resource_types.py          # rewrite the file
    .venv/bin/python tools/gen_resource_types.py --check  # exit 1 if stale

The reference sits between the BEGIN/END marker comments; it comes from
the ``nestedflow.resources`` entry points of the nestedflow distribution
(the types ``nestedflow`` itself registers, not other installed plugins)
and each plugin class's docstring, ``properties_schema`` and
``attributes_schema`` -- as the configuration reference comes from the
options (tests/unit/test_resource_types_doc.py checks it is current).
Run it after adding or changing a resource type.
"""

import importlib.metadata
import pathlib
import re
import sys
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import doc_sections  # noqa: E402 - a sibling of this script, not a package

BEGIN = ".. BEGIN GENERATED: resource types (tools/gen_resource_types.py)\n"
END = ".. END GENERATED: resource types\n"
DOC = pathlib.Path(__file__).resolve().parent.parent / "doc" / "source" / "resource-types.rst"
NAMESPACE = "nestedflow.resources"


def registered_types():
    """{type name: plugin class} of the nestedflow distribution's entry points."""
    dist = importlib.metadata.distribution("nestedflow")
    return {ep.name: ep.load() for ep in dist.entry_points if ep.group == NAMESPACE}


def _text(value):
    value = re.sub(r"\s+", " ", str(value)).strip()
    return re.sub(r"([\\*`|_])", r"\\\1", value)


def _literal(value):
    return f"``{value!r}``" if value is not None else ""


def _summary(cls):
    """The class docstring's first paragraph, as prose."""
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return re.sub(r"\s+", " ", doc)


def _table(title, header, rows, widths):
    lines = [f".. list-table:: {title}", "   :header-rows: 1",
             f"   :widths: {' '.join(map(str, widths))}", ""]
    for first, *rest in [header, *rows]:
        lines.append(f"   * - {first}".rstrip())
        lines.extend(f"     - {cell}".rstrip() for cell in rest)
    return lines


def _property_rows(schema, prefix=""):
    rows = []
    for name, prop in schema.items():
        limits = "; ".join(_text(c.description) for c in prop.constraints)
        rows.append([f"``{prefix}{name}``", prop.type, "yes" if prop.required else "",
                     _literal(prop.default), "in place" if prop.update_allowed else "replace",
                     limits, _text(prop.description)])
        inner = prop.schema.schema if prop.type == "list" and prop.schema is not None \
            else prop.schema
        if isinstance(inner, dict):
            rows.extend(_property_rows(inner, f"{prefix}{name}.")
                        if prop.type == "map" else _property_rows(inner, f"{prefix}{name}[]."))
    return rows


def section_rst(types):
    """The reference of ``types`` ({name: class}), one subsection each."""
    first_name = {}
    for name in sorted(types):
        first_name.setdefault(types[name], name)
    lines = []
    for name in sorted(types):
        cls = types[name]
        lines += [name, "-" * len(name), ""]
        if first_name[cls] != name:
            lines += [f"Another name of ``{first_name[cls]}`` (the same plugin).", ""]
            continue
        # Docstrings are reStructuredText already.
        lines += [textwrap.fill(_summary(cls), 79, break_long_words=False,
                                break_on_hyphens=False), "",
                  f"Plugin: ``{cls.__module__}:{cls.__qualname__}``.", ""]
        schema = cls.properties_schema
        if schema is None:
            lines += ["Properties: any (not checked).", ""]
        elif schema:
            lines += _table(f"{name} properties",
                            ["Property", "Type", "Required", "Default", "On change",
                             "Constraints", "Description"],
                            _property_rows(schema), [16, 8, 8, 12, 10, 16, 30])
            lines.append("")
        else:
            lines += ["Properties: none.", ""]
        if cls.attributes_schema:
            lines += _table(f"{name} attributes", ["Attribute", "Type", "Description"],
                            [[f"``{attr}``", spec.type, _text(spec.description)]
                             for attr, spec in cls.attributes_schema.items()], [25, 10, 65])
            lines.append("")
        if cls.dynamic_attributes:
            lines += ["Any other attribute name is accepted too (see the description).", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def render(text, types=None):
    types = registered_types() if types is None else types
    return doc_sections.splice(text, BEGIN, END, section_rst(types))


if __name__ == "__main__":
    sys.exit(doc_sections.main(DOC, render, sys.argv[1:]))
