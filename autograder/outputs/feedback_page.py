"""The student's feedback page (feedback/<id>.html): one self-contained HTML page, in the student's language.

Every check's verdict and message; expected/got values only for public checks, nothing of a hidden check but its
message. The page's own words come from MESSAGES, bilingual like every other text (autograder.i18n).
"""

import html

from autograder.course.exercises import exercise_title
from autograder.i18n import language, render
from autograder.running.rendering import MARKS

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
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
         "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3em;"
         "text-align:left;vertical-align:top}.passed{color:#1a7f37}.failed,.error{color:#cf222e}"
         "pre{background:#f6f8fa;padding:.4em;margin:.3em 0;white-space:pre-wrap}")


def feedback_html(document, lang=None):
    """The page for one student's record, in `lang` (default: ATTNKIT_LANG or the locale, as the messages)."""
    lang = lang or language()
    escape = html.escape

    def say(key, **fields):
        return escape(render(MESSAGES, key, lang, fields))

    student = document["student_id"]
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="{lang}"><head><meta charset="utf-8">',
        f"<title>{say('title', student=student)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{say('heading', student=student)}</h1>",
        f"<p>{say('total')}: <strong>{number(document['score'])} / {number(document['max_score'])}</strong></p>",
    ]
    if document.get("grader_error"):
        parts.append(f"<p class=\"error\">{say('grader_error', problem=document['grader_error'])}</p>")
    for notebook in document["notebooks"]:
        parts.append(f"<h2>{escape(notebook['notebook'])}: {number(notebook['score'])} / "
                     f"{number(notebook['max_score'])}</h2>")
        if notebook["status"] != "graded":
            parts.append(f"<p class=\"error\">{say('not_graded', reason=notebook['reason'])}</p>")
        parts.append(f"<table><tr><th></th><th>{say('exercise')}</th><th>{say('check')}</th>"
                     f"<th>{say('points')}</th></tr>")
        for check in notebook["checks"]:
            kind = say("hidden_check") if check["hidden"] else say("public_check")
            details = ""
            if not check["hidden"] and check.get("details"):
                details = "<pre>" + escape("\n".join(check["details"])) + "</pre>"
            parts.append(
                f"<tr class=\"{escape(check['status'])}\"><td>{MARKS.get(check['status'], '✘')}</td>"
                f"<td>{escape(exercise_title(check['exercise'], lang))}</td>"
                f"<td>{escape(check['message'])}<br><small>{kind}</small>{details}</td>"
                f"<td>{number(check['score'])} / {number(check['max_score'])}</td></tr>"
            )
        parts.append("</table>")
        if notebook["notes"]:
            parts.append(f"<p>{say('notes')}</p><ul>")
            parts.extend(f"<li>{escape(note)}</li>" for note in notebook["notes"])
            parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def number(value):
    """A score as the tables show it: 6, 2.5 (never 6.0)."""
    return f"{float(value):g}"
