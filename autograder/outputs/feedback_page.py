"""The student's feedback page (feedback/<id>.html): one self-contained HTML page, in the student's language.

Each notebook leads with what lost points: every failed check's message (the named mistake and its hint, once per
exercise), its expected/got values and its picture (public checks only: nothing of a hidden check but its message);
what passed is folded away (a <details> element). The page's own words come from MESSAGES, bilingual like every
other text (autograder.i18n). It runs nothing and loads nothing: its Content-Security-Policy allows no script and
no request, only its own inline style and the pictures it carries as data URLs, which it draws itself from the
numbers the record keeps (autograder.outputs.picture_documents), never from markup read from a file.
"""

from collections.abc import Callable
from dataclasses import dataclass

from autograder.checking.check_types import Status, Untraced
from autograder.checking.pictures import svg_data_url
from autograder.course.exercises import exercise_title
from autograder.i18n import language, render
from autograder.outputs.documents import CheckDocument, NotebookDocument, StudentDocument
from autograder.outputs.picture_documents import heatmap_of
from autograder.running.rendering import MARKS, heatmap_picture
from autograder.templating import render as render_page

__all__ = ["MESSAGES", "departure_lost_line", "feedback_html"]

TEMPLATE = "feedback.html.j2"

MESSAGES = {
    "title": {"en": "attnkit feedback: {student}", "zh": "attnkit 反馈：{student}"},
    "heading": {"en": "Feedback for {student}", "zh": "{student} 的反馈"},
    "total": {"en": "Total", "zh": "总分"},
    "grader_error": {"en": "{problem}: not your code's fault; ask your instructor to grade it again",
                     "zh": "{problem}：这不是你的代码的问题；请让老师重新评分"},
    "not_graded": {"en": "Not graded: {reason}", "zh": "未评分：{reason}"},
    "exercise": {"en": "Exercise", "zh": "练习"},
    "check": {"en": "Check", "zh": "检查"},
    "points": {"en": "Points", "zh": "分数"},
    "hidden_check": {"en": "graded check (hidden)", "zh": "评分检查（隐藏）"},
    "public_check": {"en": "public check", "zh": "公开检查"},
    "notes": {"en": "While running your notebook:", "zh": "运行你的 notebook 时："},
    "lost": {"en": "What lost points", "zh": "失分的地方"},
    "passed": {"en": "{count} checks passed ({points} points): show them",
               "zh": "{count} 项检查通过（{points} 分）：点击查看"},
    "not_run": {"en": "{count} checks not run: show them", "zh": "{count} 项检查没有运行：点击查看"},
    "departure_lost": {"en": "Where your computation first departs from the notes could not be computed this run: "
                             "{why}.",
                       "zh": "本次运行未能算出你的计算从哪一步开始与讲义不同：{why}。"},
}

# Why a failed check's departure was not computed (a record's `departure_lost`), in plain words: said of the grader's
# run, never a diagnosis of the student's code beyond what stopped the trace.
LOST_REASONS: dict[Untraced, dict[str, str]] = {
    Untraced.NOT_TRACED: {"en": "the trace was stopped before it ran", "zh": "追踪在运行前被停止"},
    Untraced.TIME: {"en": "the grader ran out of time tracing your code", "zh": "评分程序追踪你的代码时超时"},
    Untraced.ERROR: {"en": "your code raised an error while it was traced", "zh": "你的代码在追踪时抛出了错误"},
    Untraced.CAP: {"en": "your code made more tensors than a trace keeps",
                   "zh": "你的代码生成的张量超过了追踪能保存的数量"},
    Untraced.REFUSED: {"en": "what the trace sent back could not be read", "zh": "追踪返回的内容无法读取"},
    Untraced.STOPPED: {"en": "the grading process stopped while tracing", "zh": "评分进程在追踪时停止了"},
    Untraced.GRADER: {"en": "the grader failed while finding it; not your code's fault",
                      "zh": "评分程序在查找时出错；这不是你的代码的问题"},
    Untraced.NOT_ASKED: {"en": "the run was stopped before the trace was asked for",
                         "zh": "运行在请求追踪之前就被停止了"},
}


@dataclass(frozen=True)
class PageImage:
    """A picture on the page: an SVG data URL the page drew itself, and its words."""

    src: str
    alt: str


@dataclass(frozen=True)
class CheckRow:
    """One check on the page (plain text: the template escapes it)."""

    status: str
    mark: str
    exercise: str
    message: str
    kind: str
    details: str | None  # a public check's expected/got lines; None for a hidden check
    points: str
    picture: PageImage | None  # a failed public check's heatmap, once per cause
    departure_lost: str = ""  # a failed check whose departure was not computed: the line that says so, and why


@dataclass(frozen=True)
class NotebookSection:
    heading: str
    not_graded: str  # "" when the notebook was graded
    lost: tuple[CheckRow, ...]  # what lost points, first on the page
    folded: tuple[CheckRow, ...]  # what passed (or, for a notebook not graded, every check): folded away
    folded_summary: str  # the <summary> of the folded checks
    notes: tuple[str, ...]


def feedback_html(document: StudentDocument, lang: str | None = None) -> str:
    """The page for one student's record, in `lang` (default: ATTNKIT_LANG or the locale, as the messages)."""
    lang = lang or language()

    def say(key: str, **fields: object) -> str:
        return render(MESSAGES, key, lang, fields)

    student = document["student_id"]
    words = {key: say(key) for key in ("total", "exercise", "check", "points", "notes", "lost")}
    return render_page(
        __package__, TEMPLATE, lang=lang, words=words,
        title=say("title", student=student), heading=say("heading", student=student),
        total=f"{number(document['score'])} / {number(document['max_score'])}",
        grader_error=say("grader_error", problem=document["grader_error"]) if document.get("grader_error") else "",
        notebooks=[_section(notebook, lang, say) for notebook in document["notebooks"]],
    )


def _section(notebook: NotebookDocument, lang: str, say: Callable[..., str]) -> NotebookSection:
    checks: list[CheckRow] = []
    ladders: set[tuple[str, str]] = set()  # (exercise, the hint ladder's lines) already on the page
    for check in notebook["checks"]:
        details = None if check["hidden"] or not check.get("details") else "\n".join(check["details"])
        # A record's message is the symptom, then the hint ladder's lines; the same hint (and the picture of the
        # same mistake) is shown once per exercise.
        symptom, _, ladder = check["message"].partition("\n")
        shown = (check["exercise"], ladder)
        first = not ladder or shown not in ladders
        ladders.add(shown)
        title = exercise_title(check["exercise"], lang)
        checks.append(CheckRow(
            status=check["status"], mark=MARKS.get(check["status"], "✘"),
            exercise=title, message=check["message"] if first else symptom,
            kind=say("hidden_check") if check["hidden"] else say("public_check"), details=details,
            points=f"{number(check['score'])} / {number(check['max_score'])}",
            picture=_picture(check, title, lang) if first else None,
            departure_lost="" if check["status"] == Status.PASSED
            else departure_lost_line(check.get("departure_lost", ""), lang)))
    graded = notebook["status"] == "graded"
    passed = tuple(check for check in checks if check.status == Status.PASSED)
    lost = tuple(check for check in checks if check.status != Status.PASSED) if graded else ()
    folded = passed if graded else tuple(checks)
    secured = sum(float(check["score"]) for check in notebook["checks"] if check["status"] == Status.PASSED)
    summary = say("passed", count=len(passed), points=number(secured)) if graded else say("not_run", count=len(folded))
    return NotebookSection(
        heading=f"{notebook['notebook']}: {number(notebook['score'])} / {number(notebook['max_score'])}",
        not_graded="" if graded else say("not_graded", reason=notebook["reason"]),
        lost=lost, folded=folded, folded_summary=summary, notes=tuple(notebook["notes"]))


UNTRACED_VALUES = frozenset(why.value for why in Untraced)


def departure_lost_line(why: object, lang: str) -> str:
    """The line saying a failed check's departure was not computed, and why; "" when `why` is not one of Untraced's
    values (none lost, or a hand-edited record: its text is never shown)."""
    reason = LOST_REASONS.get(Untraced(why)) if isinstance(why, str) and why in UNTRACED_VALUES else None
    return render(MESSAGES, "departure_lost", lang, {"why": reason.get(lang, reason["en"])}) if reason else ""


def _picture(check: CheckDocument, title: str, lang: str) -> PageImage | None:
    """A failed public check's heatmap, drawn from the numbers its record keeps; None for any other check."""
    heatmap = None if check["hidden"] or check["status"] == Status.PASSED else heatmap_of(check.get("heatmap"))
    if heatmap is None:
        return None
    picture = heatmap_picture(heatmap, lang)
    return PageImage(svg_data_url(picture.svg), f"{title}: {picture.alt}")


def number(value: float) -> str:
    """A score as the tables show it: 6, 2.5 (never 6.0)."""
    return f"{float(value):g}"
