"""check(...)'s output reads at a glance: the values around the largest difference, both sides column under column;
the table as HTML in a kernel (escaped, wrapping at words) with a plain form wrapped at words; no ids on show."""

import contextlib
import html.parser
import io
import re

import pytest
import torch

from autograder.checking import notebook_display
from autograder.checking.check_types import Verdict
from autograder.checking.notebook_display import WIDTH, html_text, plain_text
from autograder.checking.pictures import show_svg
from autograder.checking.results import public_details
from autograder.checking.text_width import columns as text_columns
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID

MESSAGES = catalog.MESSAGES


def details(expected, got, lang="en", **fields):
    return public_details(Verdict(False, "x", expected=expected, got=got, **fields), lang, MESSAGES)


def value_lines(lines):
    return [line for line in lines if line.startswith(("expected", "got", "期望", "实际"))]


def commas(line):
    """Where each value ends: the columns of the commas and the closing bracket of the values' list."""
    values = line[line.rindex("["):]
    start = text_columns(line) - text_columns(values)
    return [start + index for index, char in enumerate(values) if char in ",]"]


# ---------------------------------------------------------------------------------------------
# the excerpt


def test_the_excerpt_shows_the_row_around_the_largest_difference_not_the_first_values():
    expected = torch.softmax(torch.arange(80.0).reshape(1, 10, 8) / 10, dim=-1)
    got = expected.clone()
    got[0, 5, 6] = 0.9  # the only wrong value: row 5, column 6
    lines = details(expected, got)
    shown_expected, shown_got = value_lines(lines)
    # Six values of row 5 (columns 2 to 7, the last six: column 6 among them), both sides from the same index.
    assert "from index (0, 5, 2)" in shown_expected and "from index (0, 5, 2)" in shown_got, lines
    assert "0.9000" in shown_got and f"{float(expected[0, 5, 6]):.4f}" in shown_expected
    values = shown_got[shown_got.rindex("["):]
    assert values.startswith("[…, ") and len(re.findall(r"\d\.\d{4}", values)) == 6, values  # the row's last six
    assert lines[-1].endswith("at index (0, 5, 6)"), lines
    # The first values of the tensor (row 0), which are equal on both sides, are not what is shown.
    first = ", ".join(f"{value:.4f}" for value in expected.reshape(-1)[:6].tolist())
    assert first not in shown_expected


def test_both_sides_line_up_column_under_column():
    expected = torch.tensor([[0.5, 0.25, 1.0, 0.0, 3.0, 0.5, 0.125, 0.75, 2.0, 1.0]])
    got = expected.clone()
    got[0, 5], got[0, 3] = -123.25, 7.0
    lines = details(expected, got)
    shown_expected, shown_got = value_lines(lines)
    assert commas(shown_expected) == commas(shown_got), "\n".join(lines)
    assert "…, " in shown_expected and ", …" in shown_expected  # more on both sides of the stretch shown
    assert "-123.2500" in shown_got and "   0.5000" in shown_expected  # padded to the wider value's width


def test_chinese_labels_line_up_too():
    expected, got = torch.zeros(3, 4), torch.zeros(3, 4)
    got[2, 3] = 1.0
    shown_expected, shown_got = value_lines(details(expected, got, "zh"))
    assert shown_expected.startswith("期望：") and shown_got.startswith("实际：")
    assert "从位置 (2, 0) 起" in shown_expected and commas(shown_expected) == commas(shown_got)


def test_the_same_infinity_on_both_sides_is_no_difference():
    expected = torch.tensor([[0.0, float("-inf"), float("-inf")], [0.0, 0.5, float("-inf")]])
    got = expected.clone()
    got[1, 1] = 0.25
    lines = details(expected, got)
    assert lines[-1].endswith("at index (1, 1)"), lines  # not the first -inf, where -inf - -inf is nan
    assert "from index (1, 0)" in value_lines(lines)[0]


def test_a_nan_against_a_number_is_said_as_what_it_is_and_nan_against_nan_is_no_difference():
    """12r's rz-ca-08: "largest difference inf" where the output held NaN: no difference to quote."""
    expected = torch.tensor([[0.5, float("nan")], [0.25, 0.75]])
    got = torch.tensor([[0.5, float("nan")], [float("nan"), 0.75]])
    assert details(expected, got)[-1] == "NaN at index (1, 0), where a number is expected"
    assert details(expected, got, "zh")[-1] == "位置 (1, 0) 是 NaN，而那里应当是一个数"
    assert details(got, expected)[-1] == "a number at index (1, 0), where NaN is expected"
    nearly = expected.clone()
    nearly[1, 1] = 0.5
    assert details(expected, nearly)[-1] == "largest difference 0.25 at index (1, 1)"  # not the NaN both hold


def test_a_wrong_shape_shows_the_first_values_of_each():
    lines = details(torch.zeros(2, 3), torch.ones(3, 2))
    assert [line.split(":")[0] for line in lines] == ["expected", "got"]
    assert "from index" not in "".join(lines) and "(2, 3)" in lines[0] and "(3, 2)" in lines[1]


def test_a_bool_mask_shows_its_values_aligned():
    mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
    shown_expected, shown_got = value_lines(details(mask, mask.T.contiguous()))
    assert "[False,  True,  True,  True]" in shown_expected and "[False, False, False, False]" in shown_got
    assert commas(shown_expected) == commas(shown_got)


# ---------------------------------------------------------------------------------------------
# plain text wrapped at words


LONG = ("  ✘ split_heads keeps every value where it belongs: the value at token 3, feature 5 of your output came from "
        "token 1 of the input; ask yourself — which axis does your reshape treat as the heads, and which as the "
        "tokens? supercalifragilisticexpialidocious_identifier_longer_than_anything_a_reader_would_want_on_a_line_"
        "of_its_own_at_all")


def test_the_plain_text_wraps_at_words_never_inside_one():
    wrapped = plain_text(LONG).split("\n")
    assert len(wrapped) > 2
    words = LONG.split()
    assert " ".join(" ".join(wrapped).split()) == " ".join(words)  # every word whole, in order
    for line in wrapped:
        assert text_columns(line) <= WIDTH or len(line.split()) == 1, line  # only a lone word may be wider
    assert wrapped[0].startswith("  ✘ ") and all(line.startswith("    ") for line in wrapped[1:])  # hanging indent


def test_chinese_wraps_between_characters_within_the_width():
    line = "      提示：" + "token 可以关注它自己：只有严格位于对角线上方的位置才是未来的 token。" * 4
    wrapped = plain_text(line).split("\n")
    assert len(wrapped) > 1 and all(text_columns(part) <= WIDTH for part in wrapped), wrapped
    assert "".join(part.strip() for part in wrapped).replace(" ", "") == line.strip().replace(" ", "")
    assert all("toke" not in part.replace("token", "") for part in wrapped)  # an English word is still whole


def test_short_lines_and_aligned_values_are_left_as_they_are():
    table = "heading\n  ✔ passes\n      expected: [ 0.5000, -1.0000]\n      got:      [-3.0000,  0.0000]"
    assert plain_text(table) == table


# ---------------------------------------------------------------------------------------------
# HTML


class Elements(html.parser.HTMLParser):
    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text = [], [], []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


HOSTILE = "<script>alert(1)</script>\"><img src=x onerror=alert(2)> \x1b[31mred\u202eevil"


def test_the_html_form_is_escaped_text_in_the_grader_s_blocks():
    table = f"Checks for X\n  ✘ a check: {HOSTILE}\n      got: [1.0000]"
    parsed = Elements(html_text(table))
    assert set(parsed.tags) == {"div"} and len(parsed.tags) == 4
    assert {name for name, _ in parsed.attributes} <= {"class", "style"}
    assert all("script" not in value and "onerror" not in value for _, value in parsed.attributes)
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text and "\\x1b[31m" in text and "\\u202e" in text  # shown, inert
    assert "\x1b" not in html_text(table) and "\u202e" not in html_text(table)
    assert "word-break:normal" in html_text(table) and "white-space:pre-wrap" in html_text(table)


def test_the_plain_form_is_cleaned_too():
    assert "\x1b" not in plain_text(HOSTILE) and "\\x1b[31m" in plain_text(HOSTILE)


# ---------------------------------------------------------------------------------------------
# check(...) in a kernel


@pytest.fixture
def kernel(monkeypatch):
    """What a kernel would be shown: each display's bundle."""
    import IPython.display

    shown = []
    monkeypatch.setattr(notebook_display, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda bundle, raw: shown.append(bundle))
    return shown


def test_check_in_a_kernel_shows_html_and_a_readable_plain_form_without_ids(kernel, monkeypatch):
    from autograder.running import notebook_runtime
    from autograder.running.in_notebook import ReferenceExpectations

    pictures_shown = []
    monkeypatch.setattr(notebook_runtime, "show_svg", lambda svg, alt: pictures_shown.append(alt))
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    runtime = notebook_runtime.NotebookRuntime(ReferenceExpectations())
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runtime.check("causal_mask", lambda num_tokens: torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu())
    assert printed.getvalue() == ""  # shown as a display, not printed
    (bundle,) = kernel
    assert set(bundle) == {"text/html", "text/plain"}
    assert "mask hides token 0" in bundle["text/plain"] and "<div" in bundle["text/html"]
    assert all(text_columns(line) <= WIDTH for line in bundle["text/plain"].split("\n"))
    assert pictures_shown and all(alt.startswith("causal_mask(6)") for alt in pictures_shown[:1])
    keys = set(MESSAGES) | {check.id for exercise in ("causal_mask",) for check in catalog.checks_of(exercise)}
    keys |= set(MISCONCEPTIONS_BY_ID)
    words = set(re.findall(r"[\w.]+", " ".join([bundle["text/plain"], *pictures_shown])))
    assert not words & keys, words & keys  # no message key, check id or mistake id on show


def test_outside_a_kernel_the_table_is_printed_as_it_is(monkeypatch):
    monkeypatch.setattr(notebook_display, "in_kernel", lambda: False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        notebook_display.show_table(LONG)
    assert printed.getvalue() == LONG + "\n"


def test_beside_a_bare_ipython_shell_the_table_and_pictures_print_as_in_a_script(monkeypatch):
    # A shell without a kernel (a terminal IPython; the grading shell a test makes in this process) has no front end
    # to show a display: check(...) prints its table, and its pictures are left out, as in a script.
    import IPython

    class BareShell:  # what get_ipython() gives in a terminal IPython: no `kernel`
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: BareShell())
    assert not notebook_display.in_kernel()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        notebook_display.show_table(LONG)
        show_svg("<svg/>", "a picture's words")
    assert printed.getvalue() == LONG + "\n"
    BareShell.kernel = object()  # a kernel's shell
    assert notebook_display.in_kernel()
