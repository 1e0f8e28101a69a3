#!/usr/bin/env python3
"""Print the commands the README tells a newcomer to run, one per line.

    python3 tools/readme_commands.py setup   # the "Try it" block
    python3 tools/readme_commands.py test    # the "Run the tests" block

``.ci/run`` runs exactly these, so CI proves the README word for word;
tests/functional/test_readme.py runs them in a fresh clone.
"""

import os
import sys

SECTIONS = {"setup": "## Try it", "test": "## Run the tests"}
README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "README.md")


def commands(section, text):
    """The lines of the first ```sh block under the heading starting ``section``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(SECTIONS[section])),
                 None)
    if start is None:
        raise SystemExit(f"README.md: no heading starting {SECTIONS[section]!r}")
    found, inside = [], False
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.strip() == "```sh":
            inside = True
            continue
        if inside and line.strip() == "```":
            return found
        if inside and line.strip() and not line.lstrip().startswith("#"):
            found.append(line.strip())
    raise SystemExit(f"README.md: no ```sh block under {SECTIONS[section]!r}")


def main(argv):
    if len(argv) != 1 or argv[0] not in SECTIONS:
        raise SystemExit(f"usage: {sys.argv[0]} {'|'.join(SECTIONS)}")
    with open(README, encoding="utf-8") as f:
        print("\n".join(commands(argv[0], f.read())))


if __name__ == "__main__":
    main(sys.argv[1:])
