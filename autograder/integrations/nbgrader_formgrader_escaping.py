"""formgrader's pages print student ids and names as text: `install()`, run by the course's nbgrader_config.py.

nbgrader's formgrader (0.9) renders its pages with a Jinja2 environment without autoescape, and its submission page
with nbconvert's (which cannot autoescape: it inserts rendered notebook HTML). So a student id (a `submitted/` folder,
i.e. the inbound folder name a student chose, or a URL's path segment) and a first or last name from the gradebook
reached the page as markup, and ran script with the instructor's token: in `manage_students/<id>`'s breadcrumb and
its `<script>var student_id = "<id>";</script>`, and in the submission page's title bar (`Last, First`, or the id, and
`data-link="autograded/<id>/..."`). The pages that list students build their rows in nbgrader's scripts with jQuery's
`.text()`, which is already safe, but for one thing: the dialog a failed request opens (`createModal`, given
"There was an error autograding 'attention' for student '<id>'.") appends its message as HTML, so an id that breaks
the request's URL (a `#` or `?` in a folder name) ran there.

`install()` wraps `FormgradeExtension.init_tornado_settings`, which builds both when the server loads formgrader,
after formgrader has loaded this course's config:

- the pages' environment is an overlay of nbgrader's with autoescape on, and with every `{{ expression }}` inside a
  `<script>` block (quoted or not) printed through `tojson` (a JavaScript string with `<`, `>`, `&`, `'` as `\\u`
  escapes, the quotes its own), so the script gets the true value and no `</script>` or quote ends it early;
  nbgrader's templates pass no markup of their own in a variable, so nothing is escaped twice;
- every page that loads formgrader's `utils.js` redefines `createModal` right after it: a message given as a string
  is shown as text (every caller of nbgrader's passes plain text or elements);
- the submission page's exporter gets `EscapeStudentResources`, which HTML-escapes the student's id, names and
  notebook path in the resources its template prints; the values nbgrader's scripts read back from an attribute
  (`data-link`) are the browser's decoding of them, the true path.

Where formgrader is not loaded (every other nbgrader command) nothing is imported or changed.
"""

import functools
import html
import re
import sys
from collections.abc import Callable
from typing import Any

from jinja2 import BaseLoader, Environment
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode

__all__ = ["FORMGRADER_MODULE", "EscapeStudentResources", "EscapedTemplates", "after_formgrader_settings",
           "escaped_template", "escaping_environment", "install"]

FORMGRADER_MODULE = "nbgrader.server_extensions.formgrader.formgrader"
# The keys of SubmissionHandler's resources that hold a student's id or names (notebook_path: autograded/<id>/...).
STUDENT_RESOURCES = ("student", "first_name", "last_name", "notebook_path")
_INSTALLED = "_attnkit_escaping"
_SCRIPT_BLOCK = re.compile(r"(<script\b[^>]*>)(.*?)(</script>)", re.DOTALL | re.IGNORECASE)
# `{{ x }}` or `"{{ x }}"` (whitespace control `{{- x -}}` kept): the quotes go, tojson writes its own.
_SCRIPT_VALUE = re.compile(r'(?P<quote>"?)\{\{(?P<left>-?)\s*(?P<expression>.+?)\s*(?P<right>-?)\}\}(?P=quote)',
                           re.DOTALL)
_UTILS_SCRIPT = re.compile(r'<script\b[^>]*\bsrc="[^"]*/formgrader/static/js/utils\.js"[^>]*>\s*</script>')
MODAL_MESSAGES_AS_TEXT = """
<script>
createModal = (function (makeModal) {  // attnkit: a message given as a string is text, never markup
  return function (id, title, body, footer) {
    return makeModal(id, title, typeof body === "string" ? $("<p/>").text(body) : body, footer);
  };
})(createModal);
</script>"""


class EscapedTemplates(BaseLoader):
    """A loader that gives its loader's templates as `escaped_template` makes them."""

    def __init__(self, loader: BaseLoader) -> None:
        self.loader = loader

    def get_source(self, environment: Environment, template: str) -> tuple[str, str | None, Callable[[], bool] | None]:
        source, filename, uptodate = self.loader.get_source(environment, template)
        return escaped_template(source), filename, uptodate

    def list_templates(self) -> list[str]:
        return self.loader.list_templates()


def escaped_template(source: str) -> str:
    """`source` (a formgrader template) with each expression printed inside a `<script>` block given through tojson
    (`"{{ x }}"` becomes `{{ (x)|tojson }}`), and with text messages in createModal after the script defining it."""
    def block(found: re.Match[str]) -> str:
        return found.group(1) + _SCRIPT_VALUE.sub(value, found.group(2)) + found.group(3)

    def value(found: re.Match[str]) -> str:
        return f"{{{{{found['left']} ({found['expression']})|tojson {found['right']}}}}}"

    return _UTILS_SCRIPT.sub(lambda found: found.group() + MODAL_MESSAGES_AS_TEXT, _SCRIPT_BLOCK.sub(block, source))


def escaping_environment(environment: Environment) -> Environment:
    """nbgrader's formgrader environment (its loader, filters and globals) with autoescape and JSON in scripts."""
    loader = environment.loader
    if loader is None:
        raise ValueError("formgrader's Jinja environment has no loader")
    return environment.overlay(autoescape=True, loader=EscapedTemplates(loader))


class EscapeStudentResources(Preprocessor):
    """The student's id, names and notebook path in formgrader's submission-page resources, HTML-escaped.

    nbconvert's template prints resources as they are; this exporter's only caller is formgrader's SubmissionHandler,
    whose resources hold them as nbgrader read them from the gradebook."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        for key in STUDENT_RESOURCES:
            value = resources.get(key)
            if isinstance(value, str):
                resources[key] = html.escape(value, quote=True)
        return nb, resources


def after_formgrader_settings(marker: str, adjust: Callable[[dict[str, Any]], None]) -> None:
    """Have formgrader's extension call `adjust(webapp.settings)` after its own `init_tornado_settings`, where
    formgrader is loaded in this process; once per `marker`, however often the config is loaded."""
    formgrader = sys.modules.get(FORMGRADER_MODULE)
    if formgrader is None:  # not the server: formgrader is imported before it loads the config that calls this
        return
    extension = formgrader.FormgradeExtension
    original = extension.init_tornado_settings
    if getattr(original, marker, False):  # functools.wraps carries the markers of the wrappers beneath
        return

    @functools.wraps(original)
    def init_tornado_settings(self: Any, webapp: Any) -> None:
        original(self, webapp)
        adjust(webapp.settings)

    setattr(init_tornado_settings, marker, True)
    extension.init_tornado_settings = init_tornado_settings


def _escape_pages(settings: dict[str, Any]) -> None:
    settings["nbgrader_jinja2_env"] = escaping_environment(settings["nbgrader_jinja2_env"])
    settings["nbgrader_exporter"].register_preprocessor(EscapeStudentResources(), enabled=True)


def install() -> None:
    """Make formgrader's pages escape what they print, where formgrader is loaded in this process; idempotent."""
    after_formgrader_settings(_INSTALLED, _escape_pages)
