"""class_report.html: score histograms per notebook, misconceptions by students affected (most first)."""

import base64
import html
import json
import re
import subprocess
import sys

import pytest

from autograder.checking.pictures import text_width
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.outputs.class_report import class_report_html, misconception_counts, write_class_report
from autograder.outputs.report_plots import LABEL_PX, bars_svg, histogram_bins, histogram_svg, wrap_label


def _document(student_id, mistakes=(), missing=()):
    """A student record as `attnkit grade` writes it: every check passed, except one per (check id, misconception)."""
    failed = dict(mistakes)
    notebooks = []
    for name in NOTEBOOKS:
        checks = []
        for exercise in (exercise for exercise in EXERCISES if exercise.notebook == name):
            for check in catalog.checks_of(exercise.id):
                wrong = check.id in failed
                checks.append({"id": check.id, "exercise": check.exercise, "max_score": float(check.points),
                               "score": 0.0 if wrong or name in missing else float(check.points),
                               "status": "failed" if wrong or name in missing else "passed",
                               "misconception": failed.get(check.id), "message": "", "hidden": check.hidden})
        notebooks.append({"notebook": name, "status": "missing" if name in missing else "graded",
                          "reason": "not submitted" if name in missing else "", "path": "", "sha256": "", "notes": [],
                          "score": sum(check["score"] for check in checks),
                          "max_score": sum(check["max_score"] for check in checks), "checks": checks})
    return {"student_id": student_id, "assignment": "attention", "submission_hash": student_id, "seed": 0,
            "score": sum(notebook["score"] for notebook in notebooks),
            "max_score": sum(notebook["max_score"] for notebook in notebooks), "notebooks": notebooks}


def _check_ids(exercise_id):
    return [check.id for check in catalog.checks_of(exercise_id)]


def _class():
    """missing_scaling: 3 students (one of them twice), mask_inverted: 2, softmax_wrong_dim: 1, nobody else."""
    scaled = _check_ids("self_attention_v1")
    causal = _check_ids("causal_mask")
    softmax = _check_ids("softmax_naive")
    return [
        _document("ana", [(scaled[0], "missing_scaling"), (scaled[1], "missing_scaling"),
                          (softmax[0], "softmax_wrong_dim")]),
        _document("ben", [(scaled[0], "missing_scaling")]),
        _document("chen", [(scaled[1], "missing_scaling"), (causal[0], "mask_inverted")]),
        _document("dana", [(causal[0], "mask_inverted")], missing=(NOTEBOOKS[3],)),
        _document("eli"),
    ]


@pytest.fixture(scope="module")
def page():
    return class_report_html(_class())


def _table_rows(page):
    return re.findall(r'<tr class="misconception" data-id="([^"]+)" data-students="(\d+)">(.*?)</tr>', page, re.S)


def test_misconceptions_are_counted_per_student_most_frequent_first():
    counts = misconception_counts(_class())
    assert [(count.id, count.students) for count in counts] == [
        ("missing_scaling", 3), ("mask_inverted", 2), ("softmax_wrong_dim", 1)]
    assert counts[0].name_en == MISCONCEPTIONS_BY_ID["missing_scaling"].name["en"]
    assert counts[0].exercises == ("self_attention_v1",)


def test_the_table_lists_misconceptions_by_students_affected_with_both_names(page):
    rows = _table_rows(page)
    assert [(misconception, int(students)) for misconception, students, _ in rows] == [
        ("missing_scaling", 3), ("mask_inverted", 2), ("softmax_wrong_dim", 1)]
    for misconception, students, cells in rows:
        known = MISCONCEPTIONS_BY_ID[misconception]
        assert known.name["en"] in cells and known.name["zh"] in cells
        assert f'<td class="n">{students}</td>' in cells
    assert "4 of 5 students have at least one" in page  # ana, ben, chen, dana


def test_the_page_is_self_contained_with_a_histogram_per_notebook_and_a_bar_plot(page):
    images = re.findall(r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    alts = [alt for alt, _ in images]
    assert alts == ["histogram of Total scores", *(f"histogram of {name} scores" for name in NOTEBOOKS),
                    "bar plot of misconceptions by students affected"]
    assert all(base64.b64decode(data).startswith(b'<svg xmlns="http://www.w3.org/2000/svg"') for _, data in images)
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing to fetch: no external image, script or style
    assert "<script" not in page
    # dana did not submit notebook 4: its "Not graded" cell says 1
    assert re.search(rf"<tr><td>{NOTEBOOKS[3]}</td>(<td[^>]*>[^<]*</td>){{5}}<td class=\"n\">1</td></tr>", page)


def test_text_is_escaped():
    odd = _document("<b>mallory</b>", [(_check_ids("softmax_naive")[0], "<script>alert(1)</script>")])
    odd["assignment"] = "a&b"
    page = class_report_html([odd])
    assert "<script>" not in page and "<b>mallory" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "a&amp;b" in page


def test_a_class_without_misconceptions_or_students():
    page = class_report_html([_document("eli")])
    assert "No known misconception" in page and not _table_rows(page)
    assert page.count("data:image/svg+xml;base64,") == 1 + len(NOTEBOOKS)
    empty = class_report_html([])
    assert "No students." in empty and "data:image" not in empty


def test_write_class_report_writes_one_file(tmp_path):
    path = write_class_report(tmp_path, _class())
    assert path == tmp_path / "class_report.html"
    assert _table_rows(path.read_text(encoding="utf-8"))
    assert sorted(item.name for item in tmp_path.iterdir()) == ["class_report.html"]


def test_plots_import_no_plotting_library():
    """The plots are SVG drawn by hand: the report imports no plotting library (matplotlib's import was most of it)."""
    code = ("import json, sys; from autograder.outputs.class_report import class_report_html; "
            "page = class_report_html(json.load(sys.stdin)); assert 'data:image/svg+xml' in page; "
            "print(any(name.split('.')[0] == 'matplotlib' for name in sys.modules))")
    process = subprocess.run([sys.executable, "-c", code], input=json.dumps(_class()), capture_output=True,
                             text=True, check=False, timeout=120)
    assert process.returncode == 0, process.stderr
    assert process.stdout.split() == ["False"]
    assert process.stderr == ""


def test_a_histogram_counts_each_score_in_its_bin_and_the_bars_list_the_most_frequent_first():
    svg = histogram_svg([18, 18, 17.5, 6, 0, 0, 0], 18, "01", "points (out of 18)")
    bars = [float(height) for height in re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', svg)]
    assert len(bars) == 3 and bars[0] == bars[2] and abs(bars[0] / bars[1] - 3) < 0.01  # 0, 6 and 18 (17.5 too)
    assert histogram_bins(18)[:2] == [-0.5, 0.5] and len(histogram_bins(100)) == 21 and len(histogram_bins(18)) == 20
    plot = bars_svg([("often",), ("<rare>",)], [7, 2], "students affected", "bar plot")
    assert plot.index(">often<") < plot.index(">&lt;rare&gt;<") and "<rare>" not in plot
    assert re.findall(r">(\d+)</text>", plot)[-2:] == ["7", "2"]




# --- the bar plot's names, whole ------------------------------------------------------------------------------------

BAR_LABEL = re.compile(r'<g fill="[^"]+"><text x="([^"]+)" y="[^"]+" text-anchor="end" font-size="\d+">([^<]*)</text>'
                       r'</g>')


def longest_names():
    """The misconceptions whose English or Chinese names are the longest of the catalogue (as drawn), three each."""
    by_width = {language: sorted(MISCONCEPTIONS_BY_ID, key=lambda key: -text_width(
        MISCONCEPTIONS_BY_ID[key].name[language]))[:3] for language in ("en", "zh")}
    return list(dict.fromkeys(by_width["en"] + by_width["zh"]))


def longest_names_class():
    """A student per misconception with one of the longest names (each named on a check of an exercise it lists)."""
    documents = []
    for number, misconception in enumerate(longest_names()):
        exercise = sorted(MISCONCEPTIONS_BY_ID[misconception].exercises)[0]
        documents.append(_document(f"s{number}", [(_check_ids(exercise)[0], misconception)]))
    return documents


def bar_plot_svg(page):
    (data,) = re.findall(r'<img alt="bar plot[^"]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', page)
    return base64.b64decode(data).decode()


def bar_plot_labels(page):
    """The bar plot's label lines, top to bottom: (x where each ends, its text)."""
    return [(float(x), html.unescape(line)) for x, line in BAR_LABEL.findall(bar_plot_svg(page))]


def test_the_longest_names_of_the_catalogue_are_shown_whole_in_both_languages_in_the_bar_plot():
    """The plot cut a name longer than its label column (the 88 characters of context_weights_other_axis lost their
    first 40 to the picture's left edge) and had no Chinese: each name is now on as many lines as it needs, all of
    them inside the picture."""
    names = longest_names()
    assert text_width(MISCONCEPTIONS_BY_ID[names[0]].name["en"]) > LABEL_PX  # longer than a line: this tests wrapping
    labels = bar_plot_labels(class_report_html(longest_names_class()))
    for x, line in labels:
        assert text_width(line) <= x, f"{line!r} (about {text_width(line)} px) starts left of the picture at x={x}"
    drawn = "".join(line for _, line in labels).replace(" ", "")
    for misconception in names:
        for language in ("en", "zh"):
            name = MISCONCEPTIONS_BY_ID[misconception].name[language]
            assert name.replace(" ", "") in drawn, f"{misconception} ({language}) is not whole in the plot"


@pytest.mark.parametrize("label", [
    "each context vector mixes the inputs with weights normalised along the other dimension",
    "权重除以的是沿 query 所在维度的和，而不是沿 key 所在维度的和，" * 3,
    "x" * 200,  # one word wider than a line: cut between its letters, nothing lost
    "short",
])
def test_a_label_is_wrapped_to_the_width_and_keeps_every_character(label):
    lines = wrap_label(label, 200)
    assert all(text_width(line) <= 200 for line in lines), lines
    assert "".join(lines).replace(" ", "") == label.replace(" ", "")
    assert not any(line[0] in "，。）" for line in lines)  # Chinese punctuation never starts a line
    if text_width(label) <= 200:
        assert lines == [label]
