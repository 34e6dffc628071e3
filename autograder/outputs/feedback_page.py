"""The student's feedback page (feedback/<id>.html): one self-contained HTML page, in the student's language.

Every check's verdict and message; expected/got values only for public checks, nothing of a hidden check but its
message. The page's own words come from MESSAGES, bilingual like every other text (autograder.i18n).
"""

from collections.abc import Callable
from dataclasses import dataclass

from autograder.course.exercises import exercise_title
from autograder.i18n import language, render
from autograder.outputs.documents import NotebookDocument, StudentDocument
from autograder.running.rendering import MARKS
from autograder.templating import render as render_page

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
}


@dataclass(frozen=True)
class CheckRow:
    """One check's row of the table (plain text: the template escapes it)."""
    status: str
    mark: str
    exercise: str
    message: str
    kind: str
    details: str | None  # a public check's expected/got lines; None for a hidden check
    points: str


@dataclass(frozen=True)
class NotebookSection:
    heading: str
    not_graded: str  # "" when the notebook was graded
    checks: tuple[CheckRow, ...]
    notes: tuple[str, ...]


def feedback_html(document: StudentDocument, lang: str | None = None) -> str:
    """The page for one student's record, in `lang` (default: ATTNKIT_LANG or the locale, as the messages)."""
    lang = lang or language()

    def say(key: str, **fields: object) -> str:
        return render(MESSAGES, key, lang, fields)

    student = document["student_id"]
    words = {key: say(key) for key in ("total", "exercise", "check", "points", "notes")}
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
        # A record's message is the symptom, then the hint ladder's lines; the same hint is shown once per exercise.
        symptom, _, ladder = check["message"].partition("\n")
        shown = (check["exercise"], ladder)
        message = check["message"] if not ladder or shown not in ladders else symptom
        ladders.add(shown)
        checks.append(CheckRow(
            status=check["status"], mark=MARKS.get(check["status"], "✘"),
            exercise=exercise_title(check["exercise"], lang), message=message,
            kind=say("hidden_check") if check["hidden"] else say("public_check"), details=details,
            points=f"{number(check['score'])} / {number(check['max_score'])}"))
    return NotebookSection(
        heading=f"{notebook['notebook']}: {number(notebook['score'])} / {number(notebook['max_score'])}",
        not_graded=say("not_graded", reason=notebook["reason"]) if notebook["status"] != "graded" else "",
        checks=tuple(checks), notes=tuple(notebook["notes"]))


def number(value: float) -> str:
    """A score as the tables show it: 6, 2.5 (never 6.0)."""
    return f"{float(value):g}"
