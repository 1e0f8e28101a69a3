# Sphinx configuration for the nestedflow documentation.
#
# The configuration reference, the plugin lists and the API reference are
# generated from the installed package (tox -e docs installs it).

project = "nestedflow"
copyright = "nestedflow contributors"
author = "nestedflow contributors"
release = "0.1.0"
version = "0.1"

extensions = [
    # .. show-options:: -- the configuration reference, from list_opts()
    "oslo_config.sphinxext",
    # .. list-plugins:: -- entry points of a stevedore namespace
    "stevedore.sphinxext",
    # the API reference of the public modules
    "sphinx.ext.autodoc",
    # .. release-notes:: -- reno's notes from releasenotes/notes
    "reno.sphinxext",
]

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}

source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = []
templates_path = []

highlight_language = "none"
pygments_style = "sphinx"

html_theme = "alabaster"
html_static_path = []
html_title = "nestedflow"
