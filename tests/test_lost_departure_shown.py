"""A departure the grader could not compute is said on the student's feedback page and in the instructor's row of
the class report (issue 58): one plain line, in the page's language, saying why in the grader's terms (a record's
`departure_lost`, autograder.checking.check_types.Untraced), never a diagnosis of its own. Only Untraced's values
are shown: a hand-edited record's other text shows nothing, and every line is escaped as the rest of the page."""

import html

import pytest
from test_class_report import _check_ids, _document
from test_class_report_students import _rows

from autograder.checking.check_types import Untraced
from autograder.i18n import LANGUAGES
from autograder.outputs.class_report import class_report_html
from autograder.outputs.feedback_page import LOST_REASONS, MESSAGES, departure_lost_line, feedback_html

HOSTILE = '<script>alert(1)</script>\x1b[2J"time'


def _lost(student_id: str, why: object, passed: bool = False) -> dict:
    """A record whose first softmax_naive check failed (or passed) with its departure lost for `why`."""
    check_id = _check_ids("softmax_naive")[0]
    document = _document(student_id, [] if passed else [(check_id, None)])
    for notebook in document["notebooks"]:
        for check in notebook["checks"]:
            if check["id"] == check_id:
                check["departure_lost"] = why
    return document


def _said(lang: str) -> str:
    """The line's words before its reason."""
    return MESSAGES["departure_lost"][lang].split("{why}")[0]


def test_every_reason_is_worded_in_every_language():
    assert set(LOST_REASONS) == set(Untraced)
    for reason in LOST_REASONS.values():
        for lang in LANGUAGES:
            assert reason[lang].strip()


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("why", list(Untraced))
def test_a_failed_check_whose_departure_was_lost_says_so_and_why(why, lang):
    page = feedback_html(_lost("s", why.value), lang)
    line = departure_lost_line(why.value, lang)
    assert LOST_REASONS[why][lang] in line and line.startswith(_said(lang))
    assert page.count(f'<p class="departure-lost">{html.escape(line)}</p>') == 1


def test_the_grader_running_out_of_time_and_a_stopped_trace_read_plainly():
    assert "ran out of time" in departure_lost_line("time", "en")
    assert "stopped" in departure_lost_line("stopped", "en")
    assert "超时" in departure_lost_line("time", "zh")


def test_nothing_is_said_of_a_passed_check_or_a_record_without_a_lost_departure():
    for document in (_lost("s", "time", passed=True), _document("s")):
        for lang in LANGUAGES:
            assert 'class="departure-lost"' not in feedback_html(document, lang)


@pytest.mark.parametrize("why", [HOSTILE, "TIME", " time", "Untraced.TIME", 7, None, ["time"], ""])
def test_a_value_not_of_untraced_shows_nothing_of_itself(why):
    for lang in LANGUAGES:
        assert departure_lost_line(why, lang) == ""
        page = feedback_html(_lost("s", why), lang)
        assert 'class="departure-lost"' not in page and "<script>" not in page and "\x1b" not in page
    row = _rows(class_report_html([_lost("ana", why)]))["ana"]
    assert 'class="lost"' not in row and "<script>" not in row


def test_the_instructors_row_says_which_exercise_lost_its_departure_and_why():
    row = _rows(class_report_html([_lost("ana", "cap"), _lost("ben", "time", passed=True)]))
    assert row["ana"].count('<span class="lost">') == 1
    assert html.escape(departure_lost_line("cap", "en")) in row["ana"]
    assert 'class="lost"' not in row["ben"]


def test_the_line_is_escaped_like_every_other_text(monkeypatch):
    monkeypatch.setitem(LOST_REASONS, Untraced.TIME, {"en": "<b>&", "zh": "<b>&"})
    page = feedback_html(_lost("s", "time"), "en")
    assert "&lt;b&gt;&amp;" in page and "<b>&" not in page
