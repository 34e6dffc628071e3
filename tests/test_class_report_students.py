"""class_report.html's student table: every student (total, each notebook, named mistakes) with a link to their
feedback page that resolves to a file inside the output folder, whatever the student's folder was named."""

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from test_class_report import _check_ids, _class, _document

from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import NOTEBOOKS
from autograder.grading import shards
from autograder.outputs import records
from autograder.outputs.class_report import FILE_NAME, class_report_html, write_class_report
from autograder.outputs.report_students import feedback_href

# Folder names a student with a weekend could hand in (nbgrader takes the folder's name as the student id; a folder's
# name holds no "/" and attnkit grade skips names that start with ".").
HOSTILE_IDS = (
    '"><script>alert(1)<\\script>',
    "'><svg onload=alert(1)>",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    "https:evil.example",
    "a?b=1#frag",
    "%2e%2e%2fsecret",
    "back\\..\\slash",
    "odd..",
    "x:y",
    "space and 'quote'",
    "名字",
)


class _Anchors(HTMLParser):
    """Every <a href> and every <tr class="student"> of a page, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.student_ids: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        if tag == "a" and values.get("href") is not None:
            self.hrefs.append(str(values["href"]))
        if tag == "tr" and values.get("class") == "student":
            self.student_ids.append(str(values["data-id"]))
        assert not any(name.startswith("on") for name, _ in attrs), (tag, attrs)


def _parsed(page: str) -> _Anchors:
    parser = _Anchors()
    parser.feed(page)
    parser.close()
    return parser


def _rows(page: str) -> dict[str, str]:
    return dict(re.findall(r'<tr class="student" data-id="([^"]*)">(.*?)</tr>', page, re.S))


def _graded(out_dir: Path, documents: list) -> Path:
    """OUT_DIR as `attnkit grade` leaves it: each student's files, grades.csv, then the report."""
    for document in documents:
        records.write_student(out_dir, document, "en")
    records.write_grades_csv(out_dir, documents)
    return write_class_report(out_dir, documents)


def _resolves_inside(out_dir: Path, href: str) -> Path:
    """The file a browser opens for `href` on file://OUT_DIR/class_report.html; it must be a file under OUT_DIR."""
    parts = urlsplit(href)
    assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", ""), href
    assert not href.startswith("/") and "\\" not in href, href
    target = Path(os.path.normpath(out_dir / unquote(parts.path)))
    assert target.is_relative_to(out_dir), href
    assert target.is_file() and not target.is_symlink(), href
    return target


@pytest.fixture(scope="module")
def page():
    return class_report_html(_class())


def test_every_student_has_a_row_by_id_with_total_notebooks_and_named_mistakes(page):
    rows = _rows(page)
    assert list(rows) == ["ana", "ben", "chen", "dana", "eli"]
    cells = {student: re.findall(r"<td[^>]*>(.*?)</td>", row) for student, row in rows.items()}
    scaling, mask = (MISCONCEPTIONS_BY_ID[name].name["en"] for name in ("missing_scaling", "mask_inverted"))
    softmax = MISCONCEPTIONS_BY_ID["softmax_wrong_dim"].name["en"]
    for student, document in zip(["ana", "ben", "chen", "dana", "eli"], _class(), strict=True):
        assert cells[student][0] == student
        assert cells[student][1] == records.format_number(document["score"])
        by_name = {notebook["notebook"]: notebook for notebook in document["notebooks"]}
        shown = cells[student][2:2 + len(NOTEBOOKS)]
        assert [cell.split(" ")[0] for cell in shown] == [records.format_number(by_name[name]["score"])
                                                          for name in NOTEBOOKS]
    assert cells["ana"][2 + len(NOTEBOOKS)] == f"{softmax}; {scaling}"  # each once, in the order the checks met them
    assert cells["chen"][2 + len(NOTEBOOKS)] == f"{scaling}; {mask}"
    assert cells["eli"][2 + len(NOTEBOOKS)] == ""
    assert cells["dana"][2 + 3] == "0 (missing)"  # notebook 4 not submitted: says so, not a bare 0
    assert "none" == cells["eli"][-1]  # class_report_html alone was given no feedback page


def test_links_resolve_to_each_students_page_inside_the_folder(tmp_path):
    documents = _class()
    page = _graded(tmp_path, documents).read_text(encoding="utf-8")
    parsed = _parsed(page)
    assert parsed.student_ids == sorted(document["student_id"] for document in documents)
    feedback = [href for href in parsed.hrefs if href.startswith("feedback/")]
    assert [_resolves_inside(tmp_path, href) for href in feedback] == [
        tmp_path / "feedback" / f"{student}.html" for student in parsed.student_ids]
    assert "grades.csv" in parsed.hrefs and _resolves_inside(tmp_path, "grades.csv")


def test_hostile_student_ids_are_escaped_and_their_links_stay_in_the_folder(tmp_path):
    ids = sorted(HOSTILE_IDS)
    documents = [_document(student, [(_check_ids("softmax_naive")[0], "<b>made-up</b>")]) for student in ids]
    page = _graded(tmp_path, documents).read_text(encoding="utf-8")
    parsed = _parsed(page)
    assert "script" not in parsed.tags
    assert parsed.student_ids == ids  # each id is text: the parser reads it back whole, nothing became markup
    assert "<b>made-up" not in page and "&lt;b&gt;made-up&lt;/b&gt;" in page
    feedback = [href for href in parsed.hrefs if href != "grades.csv"]
    assert len(feedback) == len(ids)
    for student, href in zip(ids, feedback, strict=True):
        assert href == feedback_href(student)
        assert _resolves_inside(tmp_path, href) == tmp_path / "feedback" / f"{student}.html"


def test_no_link_without_a_page_or_to_a_link(tmp_path):
    documents = [_document("ana"), _document("ben"), _document("chen")]
    for document in documents:
        records.write_student(tmp_path, document, "en")
    (tmp_path / "feedback" / "ben.html").unlink()  # e.g. a grader error: only its record was written
    (tmp_path / "feedback" / "chen.html").unlink()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.html"
    outside.write_text("not the grader's", encoding="utf-8")
    (tmp_path / "feedback" / "chen.html").symlink_to(outside)
    # A record whose id is a path (no folder is named so; a hand-edited students/ could be): no link, even where
    # the file it names exists.
    (tmp_path / "x.html").write_text("the folder's own file", encoding="utf-8")
    documents += [_document("../x"), _document(".hidden")]
    (tmp_path / "feedback" / ".hidden.html").write_text("", encoding="utf-8")
    page = write_class_report(tmp_path, documents).read_text(encoding="utf-8")
    assert _parsed(page).hrefs == [feedback_href("ana")]
    assert _rows(page)["ben"].endswith("<td>none</td>") and _rows(page)["chen"].endswith("<td>none</td>")


def test_a_grader_error_shows_in_its_row_without_an_earlier_runs_page(tmp_path):
    records.write_student(tmp_path, _document("gina"), "en")  # an earlier run's page
    failed = records.grader_error_document("gina", "attention", 0, "grader error: OSError: boom")
    row = _rows(write_class_report(tmp_path, [failed, _document("eli")]).read_text(encoding="utf-8"))["gina"]
    assert "grader error: OSError: boom" in row and row.count("0 (missing)") == len(NOTEBOOKS)
    assert row.endswith("<td>none</td>")


@pytest.mark.slow
def test_three_hundred_students_keep_the_page_small():
    """Rows grow the page linearly and modestly: about 250 bytes a student beyond the pictures (measured: 250)."""
    small = class_report_html([_document(f"s{index:03}") for index in range(10)])
    large = class_report_html([_document(f"s{index:03}") for index in range(310)])
    per_student = (len(large.encode()) - len(small.encode())) / 300
    assert per_student < 400, per_student
    assert len(_rows(large)) == 310


def test_merge_writes_the_rows_and_links_of_every_shard(tmp_path):
    """`attnkit merge`'s report: every student of every shard, each link to the page merge copied."""
    documents = {document["student_id"]: document for document in _class()}
    out_dirs = []
    for index in range(2):
        out_dir = tmp_path / f"shard{index}"
        shard = shards.Shard(index, 2)
        mine = [document for student, document in documents.items() if shard.contains(student)]
        for document in mine:
            records.write_student(out_dir, document, "en")
        shards.write_manifest(shards.Manifest(out_dir, "attention", 0, "catalogue", shard, True,
                                              {document["student_id"]: document["submission_hash"]
                                               for document in mine}))
        out_dirs.append(out_dir)
    merged = tmp_path / "merged"
    shards.merge(out_dirs, merged)
    page = (merged / FILE_NAME).read_text(encoding="utf-8")
    parsed = _parsed(page)
    assert parsed.student_ids == sorted(documents)
    feedback = [href for href in parsed.hrefs if href.startswith("feedback/")]
    assert [_resolves_inside(merged, href) for href in feedback] == [
        merged / "feedback" / f"{student}.html" for student in sorted(documents)]


def test_an_nbgrader_course_says_where_its_feedback_pages_are(tmp_path):
    course = tmp_path / "course"
    (course / "grades").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    said = "nbgrader's feedback pages"
    assert said not in write_class_report(course / "grades", [_document("eli")]).read_text(encoding="utf-8")
    (course / "feedback" / "eli" / "attention").mkdir(parents=True)  # generate_feedback has run
    page = write_class_report(course / "grades", [_document("eli")]).read_text(encoding="utf-8")
    assert said in page and f"<code>{course.resolve() / 'feedback' / '&lt;student&gt;' / 'attention'}</code>" in page
    assert not any(href.startswith(("/", "..")) or "feedback/eli/" in href for href in _parsed(page).hrefs)
