"""The feedback page's template: nbgrader's, with alternative text on every SVG picture.

nbconvert's classic template (nbgrader's feedback page extends it) shows an SVG output as an `<img>` without `alt`,
so a screen reader says nothing of attnkit's heatmaps and `nbgrader generate_feedback` warns "Alternative text is
missing on N image(s)". `templates/attnkit_feedback/` extends nbgrader's `feedback` template and gives each SVG the
output's `text/plain` (a heatmap's words: autograder.running.rendering.pictures_of) as its `alt`, escaped. The course's
nbgrader_config.py sets it for generate_feedback's exporter only (`c.GenerateFeedback.HTMLExporter`): formgrader's
pages keep their own template.
"""

from pathlib import Path

import nbgrader

__all__: list[str] = []

TEMPLATE = "attnkit_feedback"
FORMGRADER = Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader"
NBGRADER_TEMPLATES = FORMGRADER / "templates"
# What nbgrader's GenerateFeedback puts in HTMLExporter.extra_template_paths: the page includes bootstrap.min.css.
NBGRADER_CSS = FORMGRADER / "static" / "node_modules" / "bootstrap" / "dist" / "css"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def template_basedirs() -> list[str]:
    """Where nbconvert finds the template by name: nbgrader's templates (its `feedback`) and attnkit's."""
    return [str(NBGRADER_TEMPLATES), str(TEMPLATES)]


def template_paths() -> list[str]:
    """Where its files are found by path: nbgrader's CSS, and nbgrader's templates for `feedback/index.html.j2`."""
    return [str(NBGRADER_CSS), str(NBGRADER_TEMPLATES)]
