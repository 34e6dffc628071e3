"""Sphinx configuration of attnkit's documentation site: MyST Markdown pages, built by `make docs` (in `make test`)
with warnings as errors and nitpicky references, into a temporary directory."""

project = "attnkit"
author = "attnkit contributors"
copyright = "attnkit contributors"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
# The site's pages only: conf.py and the build's own folders are no pages.
exclude_patterns = ["_build"]

# Every heading down to ### gets an anchor, so `[text](page.md#heading)` links are checked at build time.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# A link to a file of the repository (outside docs/) is no document: such links are written as code, not links.
myst_all_links_external = False

html_theme = "alabaster"
html_static_path = ["_static"]
html_title = "attnkit"
# Offline build: no external image, font or search index fetched.
html_theme_options = {"description": "Attention from scratch, autograded", "fixed_sidebar": True}

nitpicky = True
language = "en"
