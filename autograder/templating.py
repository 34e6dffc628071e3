"""Jinja2 for attnkit's HTML pages: one environment per package, its templates in <package>/templates/*.html.j2.

Every value a template prints is escaped (autoescape on; `escape` below as the environment's `finalize`), so
student text cannot become markup whatever it holds: `<script>`, quotes, `{{ }}` or `{% %}` (data, never parsed
as template code), bidi controls (made visible by autograder.safe_text before they get here). Only the grader's
own pre-rendered pieces (an inline PNG's data URL) are passed as markupsafe.Markup; nothing from a student ever is.
Undefined names are errors (StrictUndefined): a template typo fails the page instead of printing nothing.
"""

import functools
import html

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

__all__ = ["TEMPLATES_FOLDER", "environment", "render"]

TEMPLATES_FOLDER = "templates"


def escape(value: object) -> Markup:
    """A printed value as HTML text: escaped as html.escape escapes it (quotes as &quot; and &#x27;, the pages'
    escaping from before they had templates, so the pages stay byte for byte the same); Markup passes as it is."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value)))


@functools.cache
def environment(package: str) -> Environment:
    """The package's environment, built once (its templates are compiled once, on first use)."""
    return Environment(
        loader=PackageLoader(package, TEMPLATES_FOLDER),
        autoescape=True,
        finalize=escape,
        undefined=StrictUndefined,
        trim_blocks=True,  # a line holding only a {% tag %} leaves no line in the page
        lstrip_blocks=True,
        keep_trailing_newline=True,  # the pages end with a newline
        auto_reload=False,  # the templates ship with the package and do not change while it runs
    )


def render(package: str, name: str, **context: object) -> str:
    """The page `name` of `package`'s templates, with `context`."""
    return environment(package).get_template(name).render(**context)
