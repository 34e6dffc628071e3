"""The HTML pages come from Jinja2 templates: student text in every field a student controls stays text.

A determined student names their folder, their notebook's exceptions and their code after markup (`<script>`,
quotes that close an attribute), after template syntax (`{{ }}`, `{% %}`: data, never evaluated) and after bidi
controls. Each page is parsed back: the only elements and attributes are the grader's own, and the student's text
reads back exactly as written (bidi controls made visible). The templates ship with the package and the bundle.
"""

import base64
import html.parser
import json
import re
import tomllib
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import jinja2
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from autograder import templating
from autograder.course import catalog
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.integrations import gradescope
from autograder.outputs.class_report import class_report_html
from autograder.outputs.feedback_page import feedback_html
from autograder.review.code_fingerprints import Fingerprint
from autograder.review.page import similarity_html
from autograder.review.similarity import Analysis, Pair, SharedMisconception, SharedOutputs, StudentCode
from autograder.safe_text import BIDI_CONTROLS, clean, clean_data

HOSTILE = ("<script>alert(1)</script>\"><img src=x onerror=alert(2)>' onmouseover='alert(3)"
           "{{ 7*7 }}{% for x in range(9) %}X{% endfor %}{# hidden #}\u202eevil\u2066")
PAGE_TEMPLATES = {"autograder.outputs": ("feedback.html.j2", "class_report.html.j2"),
                  "autograder.review": ("similarity.html.j2",)}
# Every element and attribute the grader's pages use; anything else came from student text.
ELEMENTS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "strong", "table", "tr", "th", "td",
            "small", "br", "pre", "ul", "li", "a", "figure", "img", "figcaption", "code", "span", "section", "div",
            "mark", "em", "h3", "details", "summary"}
ATTRIBUTES = {"lang", "charset", "class", "id", "href", "alt", "src", "data-id", "data-students", "data-a", "data-b",
              "title", "http-equiv", "content"}
PICTURE_SOURCES = ("data:image/png;base64,", "data:image/svg+xml;base64,")  # pictures the grader drew itself


class _Page(html.parser.HTMLParser):
    """The page as a browser reads it: its elements, their attributes, and its text."""

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.elements, self.attributes, self.text, self.sources = set(), set(), [], []
        self.feed(page)
        self.close()
        self.text = "".join(self.text)

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        self.attributes.update(name for name, _ in attrs)
        self.sources.extend(value for name, value in attrs if name == "src")
        self.text.extend(value or "" for name, value in attrs if name in ("alt", "title", "data-a", "data-b",
                                                                          "data-id", "href"))

    def handle_data(self, data):
        self.text.append(data)


def assert_only_the_grader_s_markup(page):
    parsed = _Page(page)
    assert parsed.elements <= ELEMENTS, parsed.elements - ELEMENTS
    assert parsed.attributes <= ATTRIBUTES, parsed.attributes - ATTRIBUTES
    assert all(source.startswith(PICTURE_SOURCES) for source in parsed.sources), parsed.sources
    assert "<script" not in page and "<img src=x" not in page
    return parsed


def _document(text):
    """A student's record with `text` in every string a student's notebook or folder can set."""
    notebooks = []
    for name in NOTEBOOKS:
        checks = [{"id": check.id, "exercise": text if index == 0 else check.exercise, "max_score": 1.0, "score": 0.0,
                   "status": text if index == 1 else "failed", "misconception": text, "message": text,
                   "hidden": index % 2 == 1, "details": [text, text]}
                  for index, check in enumerate(catalog.checks_of(next(e.id for e in EXERCISES if e.notebook == name)))]
        notebooks.append({"notebook": text, "status": "missing", "reason": text, "path": text, "sha256": "",
                          "notes": [text], "score": 0.0, "max_score": float(len(checks)), "checks": checks})
    # The record is cleaned where results become outputs (records.student_document): so is this one.
    return clean_data({"student_id": text, "assignment": text, "submission_hash": "", "seed": 0, "score": 0.0,
                       "max_score": 4.0, "notebooks": notebooks, "grader_error": text})


def _similarity_inputs(text):
    students = [StudentCode(f"a{text}", [(f"nb / {text}", f"x = 1  # {text}\ny = 2")]),
                StudentCode(f"b{text}", [(f"nb / {text}", f"x = 1  # {text}\nz = 3"), ("nb / other", text)])]
    for student in students:
        student.fingerprints.append((0, Fingerprint(7, 0, len(student.cells[0][1]) // 2)))
    pair = Pair(students[0].id, students[1].id, 0.9, 0.8, [SharedOutputs(text, 2, 2, False)],
                [SharedMisconception(text, 2)], passages=3)
    analysis = Analysis([pair], 2, 1, 2, {(pair.student_a, pair.student_b): {7}}, notes=[text])
    return analysis, students


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_feedback_page_shows_hostile_text_as_text(lang):
    page = feedback_html(_document(HOSTILE), lang)
    parsed = assert_only_the_grader_s_markup(page)
    shown = clean(HOSTILE)
    assert "\\u202eevil\\u2066" in shown and shown in parsed.text  # read back exactly, bidi controls visible
    assert parsed.text.count("{{ 7*7 }}") >= 5 and "{% for x in range(9) %}X{% endfor %}" in parsed.text
    assert "XXXXXXXXX" not in page and "<tr class=\"<" not in page
    assert not set(page) & set(BIDI_CONTROLS)
    assert "&lt;script&gt;" in page and "&quot;&gt;" in page and "&#x27; onmouseover=&#x27;" in page


def test_the_class_report_shows_hostile_text_as_text():
    documents = [_document(HOSTILE), _document("plain")]
    page = class_report_html(documents, title=HOSTILE, links=[(HOSTILE, f"{HOSTILE}.html")])
    parsed = assert_only_the_grader_s_markup(page)
    assert HOSTILE in parsed.text  # the title and link label are the instructor's: no cleaning, still only text
    assert clean(HOSTILE) in parsed.text  # the assignment, a misconception, an exercise: from the record
    assert "XXXXXXXXX" not in page and len(parsed.sources) == 1 + len(NOTEBOOKS) + 1  # histograms + bar plot


def test_the_similarity_page_shows_hostile_text_and_code_as_text():
    analysis, students = _similarity_inputs(HOSTILE)
    page = similarity_html(analysis, students)
    parsed = assert_only_the_grader_s_markup(page)
    shown = clean(HOSTILE)
    assert shown in parsed.text and f"a{HOSTILE}" in parsed.text  # ids as the folders spell them (attributes too)
    assert page.count("<mark>") == 2 and "XXXXXXXXX" not in page
    code = re.findall(r'<pre title="[^"]*">(.*?)</pre>', page, re.DOTALL)
    assert len(code) == 2 and all("\\u202eevil\\u2066" in cell and "\u202e" not in cell for cell in code)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_reads_back_from_every_page(text):
    feedback = _Page(feedback_html(_document(text), "en"))
    assert feedback.elements <= ELEMENTS and clean(text) in feedback.text
    analysis, students = _similarity_inputs(text)
    similarity = _Page(similarity_html(analysis, students))
    assert similarity.elements <= ELEMENTS and clean(text) in similarity.text


def test_one_environment_per_package_escaping_and_strict():
    environment = templating.environment("autograder.outputs")
    assert templating.environment("autograder.outputs") is environment
    assert templating.environment("autograder.review") is not environment
    assert environment.autoescape is True and environment.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):  # a misspelt field fails the page rather than printing nothing
        environment.from_string("<p>{{ student_nmae }}</p>").render(student_name="x")
    rendered = environment.from_string("<a title=\"{{ t }}\">{{ t }}</a>{{ m }}").render(
        t="\"'<&>{{ 1 }}", m=Markup("<b>grader's</b>"))
    escaped = "&quot;&#x27;&lt;&amp;&gt;{{ 1 }}"  # as html.escape writes it, the pages' escaping before templates
    assert rendered == f"<a title=\"{escaped}\">{escaped}</a><b>grader's</b>"


def test_every_template_ships_with_the_package_and_in_the_gradescope_bundle(tmp_path, repo_root):
    declared = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package, names in PAGE_TEMPLATES.items():
        folder = repo_root / Path(*package.split(".")) / templating.TEMPLATES_FOLDER
        assert sorted(path.name for path in folder.glob("*.j2")) == sorted(names)
        assert all(any(Path(f"templates/{name}").match(glob) for glob in declared[package]) for name in names)
        assert all(templating.environment(package).get_template(name) for name in names)
    names = set(gradescope.build_bundle(tmp_path / "bundle.zip"))
    with zipfile.ZipFile(tmp_path / "bundle.zip") as bundle:
        for package, templates in PAGE_TEMPLATES.items():
            for name in templates:
                path = f"{'/'.join(package.split('.'))}/templates/{name}"
                assert path in names and bundle.read(path) == (repo_root / path).read_bytes()


# ---------------------------------------------------------------------------------------------
# the feedback page leads with what lost points, with its picture, and folds what passed


def _graded_record(heatmap_document):
    """A graded notebook: a passed check, a failed public check with its heatmap, a failed hidden one (its record
    forged to carry a heatmap too: the page must still show nothing of it but its message)."""
    checks = [
        {"id": "a.passes", "exercise": "causal_mask", "score": 2.0, "max_score": 2.0, "status": "passed",
         "misconception": None, "message": "PASSED-MESSAGE", "hidden": False},
        {"id": "causal_mask.notes", "exercise": "causal_mask", "score": 0.0, "max_score": 2.0, "status": "failed",
         "misconception": "m", "message": "LOST-MESSAGE\nreproduced mistake — the mask also hides the diagonal",
         "hidden": False, "details": ["expected: …"], "heatmap": heatmap_document},
        {"id": "causal_mask.hidden", "exercise": "causal_mask", "score": 0.0, "max_score": 4.0, "status": "failed",
         "misconception": None, "message": "HIDDEN-MESSAGE", "hidden": True, "heatmap": heatmap_document},
    ]
    notebook = {"notebook": "03_causal_attention", "path": "03.ipynb", "status": "graded", "reason": "",
                "score": 2.0, "max_score": 8.0, "sha256": "", "checks": checks, "notes": []}
    return {"student_id": "s", "assignment": "a", "submission_hash": "h", "seed": 0, "score": 2.0, "max_score": 8.0,
            "notebooks": [notebook]}


def _mask_heatmap():
    from autograder.checking.pictures import Heatmap
    from autograder.outputs.picture_documents import heatmap_document

    mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
    return heatmap_document(Heatmap.of(mask, torch.ones(6, 6, dtype=torch.bool).triu()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_feedback_page_leads_with_what_lost_points_and_its_picture(lang):
    page = feedback_html(_document_as_written(_graded_record(_mask_heatmap())), lang)
    parsed = assert_only_the_grader_s_markup(page)
    lost, folded = page.index("LOST-MESSAGE"), page.index("<details>")
    assert lost < folded < page.index("PASSED-MESSAGE")  # what lost points first; what passed folded, below
    assert page.index("HIDDEN-MESSAGE") < folded
    assert 'content="default-src \'none\'; img-src data:; style-src \'unsafe-inline\'"' in page
    (source,) = parsed.sources  # one picture: the public check's, none for the hidden one
    svg = base64.b64decode(source.removeprefix("data:image/svg+xml;base64,")).decode("utf-8")
    root = ElementTree.fromstring(svg)
    words = {"en": "they differ in 6 of 36 cells", "zh": "36 个格子中有 6 个不同"}[lang]
    (alt,) = re.findall(r'<img alt="([^"]*)"', page)
    assert words in alt and words in root.get("aria-label") and words in root.find("{*}title").text
    assert {element.tag.split("}")[1] for element in root.iter()} <= {"svg", "title", "rect", "g", "text"}


def _document_as_written(document):
    """The record as students/<id>.json holds it: cleaned, and through JSON."""
    return json.loads(json.dumps(clean_data(document)))


@pytest.mark.parametrize("forged", [
    HOSTILE, None, 7, [], {}, {"expected": [[HOSTILE]], "got": [[0.0]], "expected_shape": [1, 1], "got_shape": [1, 1],
                               "mask": False},
    {"expected": [[0.0, 1.0], [0.0]], "got": [[0.0]], "expected_shape": [2, 2], "got_shape": [1, 1], "mask": False},
    {"expected": [[0.0]], "got": [[0.0]], "expected_shape": [3, 3], "got_shape": [1, 1], "mask": False},
    {"expected": [[0.0]], "got": [[10**400]], "expected_shape": [1, 1], "got_shape": [1, 1], "mask": False},
    {"expected": [[0.0]], "got": [[True]], "expected_shape": [1, 1], "got_shape": [1, 1], "mask": "yes"},
    {"expected": [[0.0] * 65] * 65, "got": [[0.0]], "expected_shape": [65, 65], "got_shape": [1, 1],
     "mask": False},
])
def test_a_record_s_heatmap_that_is_not_the_grader_s_draws_no_picture(forged):
    page = feedback_html(_document_as_written(_graded_record(forged)), "en")
    parsed = assert_only_the_grader_s_markup(page)
    assert parsed.sources == [] and "LOST-MESSAGE" in parsed.text and "<script" not in page


def test_a_heatmap_keeps_its_infinities_and_shapes_through_the_record():
    from autograder.checking.pictures import Heatmap, describe_heatmap
    from autograder.outputs.picture_documents import heatmap_document, heatmap_of

    scores = torch.tensor([[[0.5, float("-inf")], [0.25, 0.75]]] * 3)
    theirs = scores.clone()
    theirs[0, 0, 1] = float("nan")
    written = _document_as_written({"heatmap": heatmap_document(Heatmap.of(scores, theirs))})["heatmap"]
    assert written["expected"][0][1] == "-inf" and written["got"][0][1] == "nan"
    back = heatmap_of(written)
    assert back is not None and back.expected_shape == (3, 2, 2) and not back.as_mask
    assert describe_heatmap(back, catalog.MESSAGES, "en") == describe_heatmap(Heatmap.of(scores, theirs),
                                                                              catalog.MESSAGES, "en")
