# Sphinx configuration for the nestedflow documentation.
#
# The docs are plain prose: nothing here imports nestedflow, so they build
# even while the package is being written (and without installing it).

project = "nestedflow"
copyright = "nestedflow contributors"
author = "nestedflow contributors"
release = "0.1.0"
version = "0.1"

extensions = []

source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = []
templates_path = []

highlight_language = "none"
pygments_style = "sphinx"

html_theme = "alabaster"
html_static_path = []
html_title = "nestedflow"
