"""Text from student code is data: any string a child sends reaches every output format written and valid.

The property test sends arbitrary text (lone surrogates, NUL, ESC, bidi overrides, very long lines) the way a
grading child does (a wire frame) and follows it through the parent's whole path: the channel, a cell note, a
failed check's message, a notebook's reason, the student's record, feedback HTML, Gradescope JSON, grades.csv, the
class report and `attnkit check`'s terminal lines.
"""

import csv
import html.parser
import json
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.api import report_lines
from autograder.grading.notebooks import GRADED, MISSING, NotebookResult, unanswered_result
from autograder.isolation import supervisor, wire
from autograder.outputs import class_report, records
from autograder.running.runner import judge_exercise
from autograder.safe_text import BIDI_CONTROLS, clean, one_line

MARK = "MARK"  # a visible prefix: the cleaned text must still be there for the reader
EXAMPLES = 400
SURROGATE = b"\xff".decode("utf-8", "surrogateescape")
NB01 = NOTEBOOKS[0]

# Every code point, surrogates included, with the dangerous ones drawn more often than chance would.
ANY_CHARACTER = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
    st.sampled_from(["\x00", "\x1b", "\x07", "\x7f", "\x85", "\r", "\u202e", "\u2066", SURROGATE, "\udfff", "\ufffe"]),
)


def unsafe_characters(text):
    """Characters no output may hold: controls (but newline and tab), surrogates, noncharacters, bidi controls."""
    return sorted({char for char in text
                   if (unicodedata.category(char) in ("Cc", "Cs") and char not in "\n\t")
                   or char in BIDI_CONTROLS or char in "\ufffe\uffff"})


def through_the_channel(event):
    """What the grader reads of an event a child sends."""
    [decoded] = list(wire.FrameReader().feed(wire.encode(event)))
    return decoded


def graded_document(text):
    """The student's record, built from `text` everywhere a student's text can appear."""
    error = {"type": MARK + text, "message": MARK + text, "line": text}
    cell_event = through_the_channel({"event": "cell", "index": 3, "error": error})
    exercise_event = through_the_channel({"event": "exercise", "exercise": "softmax_naive",
                                          "records": {"softmax_naive.notes": [{"error": error}],
                                                      "softmax_naive.random": [{"error": error}]}})
    checks = judge_exercise("softmax_naive", exercise_event["records"], lang="en")
    notes = [supervisor._cell_note(cell_event["index"], cell_event["error"])]
    graded = NotebookResult(("s", NB01), NB01, f"{NB01}.ipynb", GRADED, "", checks, notes)
    # A reason built from the raw text (e.g. a file name): the record cleans what the channel did not.
    missing = unanswered_result(("s", NOTEBOOKS[1]), NOTEBOOKS[1], MARK + text, MISSING, MARK + text, "en")
    return records.student_document("student", "attention", "hash", 0, [graded, missing]), [graded, missing]


class _StrictParser(html.parser.HTMLParser):
    def error(self, message):  # pragma: no cover - HTMLParser of 3.11 no longer calls it
        raise AssertionError(message)


def assert_safe(text, where):
    assert unsafe_characters(text) == [], where
    text.encode("utf-8")  # raises on anything that cannot be written


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=ANY_CHARACTER, max_size=300))
@example(text=SURROGATE)
@example(text="\x00\x1b[2J\x1b]0;pwned\x07")
@example(text="\u202eexe.txt\u202c and \u2066isolate\u2069")
@example(text="x" * 1_000_000)
@example(text="=HYPERLINK(\"http://example.org\")")
@pytest.mark.slow
def test_any_student_text_reaches_every_output_written_and_valid(tmp_path, text):
    out = tmp_path / "out"
    document, results = graded_document(text)
    records.write_student(out, document)
    records.write_grades_csv(out, [document])

    feedback = (out / "feedback" / "student.html").read_text(encoding="utf-8")
    _StrictParser().feed(feedback)
    assert_safe(feedback, "feedback html")
    assert MARK in feedback
    for path in (out / "students" / "student.json", out / "gradescope" / "student" / "results.json"):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        assert_safe(json.dumps(loaded, ensure_ascii=False), path.name)
    with open(out / "grades.csv", newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    assert len(rows) == 2 and len(rows[1]) == len(rows[0])
    assert_safe("".join(rows[1]), "grades.csv")
    assert not rows[1][-1].startswith(records.FORMULA_STARTS)
    for line in report_lines(results):
        assert_safe(line, "terminal")


# The class report draws plots (about a second each): fewer runs, each over a class of many students' texts.
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(alphabet=ANY_CHARACTER, max_size=300), min_size=1, max_size=25))
@example(texts=[SURROGATE, "\x00\x1b[2J", "\u202eevil", "x" * 1_000_000])
@pytest.mark.slow
def test_a_class_of_student_texts_gives_a_valid_class_report(tmp_path, texts):
    documents = []
    for number, text in enumerate(texts):
        document, _ = graded_document(text)
        documents.append({**document, "student_id": f"{number}{text[:20]}"})
    page = class_report.write_class_report(tmp_path, documents).read_text(encoding="utf-8")
    _StrictParser().feed(page)
    assert_safe(page, "class report")


def test_clean_makes_controls_visible_and_keeps_the_rest():
    assert clean("a\x00b\x1b[1mc") == "a\\x00b\\x1b[1mc"
    assert clean(f"x{SURROGATE}y") == "x\ufffdy"
    assert clean("\u202eevil") == "\\u202eevil"
    assert clean("注意力 line 1\nline 2\ttab") == "注意力 line 1\nline 2\ttab"
    assert one_line("a\n  b\t c") == "a b c"
    long = clean("x" * 10_000, limit=100)
    assert len(long) == 100 and long.endswith("…")


def _rule(char):
    """What clean does to one character, from Unicode's own tables (the module's rule, written out again)."""
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
        return "\ufffd"
    if char in "\n\t":
        return char
    if char in BIDI_CONTROLS or char in "\u2028\u2029" or unicodedata.category(char) == "Cc":
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def test_clean_follows_the_rule_on_every_code_point_and_on_them_all_in_one_text():
    every = [chr(code) for code in range(0x110000)]
    expected = [_rule(char) for char in every]
    assert [clean(char) for char in every] == expected
    assert clean("".join(every), limit=10**7) == "".join(expected)  # a limit past the escaped length: nothing cut
