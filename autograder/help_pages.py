"""Where `attnkit --help` and each command's help send a reader: the documentation pages, by their path in the
attnkit checkout (the docs are a Sphinx site built from docs/, with no hosted copy).

A command without a page of its own (one added later) is sent to the instructor guide's index; tests/test_cli_help.py
checks that every page named here exists and that every command's help names one.
"""

__all__ = ["command_epilog", "main_epilog"]

DOCS = "docs"
INDEX = "docs/instructor/index.md"
PAGES = {
    "check": "docs/instructor/grade.md",
    "grade": "docs/instructor/grade.md",
    "merge": "docs/scaling.md",
    "similarity": "docs/similarity.md",
    "export": "docs/instructor/export.md",
    "report": "docs/instructor/feedback.md",
    "gradescope": "docs/instructor/gradescope.md",
    "student-kit": "docs/student-kit.md",
    "course": "docs/instructor/setup.md",
    "points": "docs/instructor/points.md",
}
# attnkit --help: the guides an instructor reads around the commands, in the order a course lives them.
GUIDES = (
    ("the instructor guide", INDEX),
    ("a course of your own", "docs/instructor/setup.md"),
    ("grading", "docs/instructor/grade.md"),
    ("points and regrades", "docs/instructor/points.md"),
    ("feedback pages and the class report", "docs/instructor/feedback.md"),
    ("grades into Canvas and Moodle", "docs/instructor/export.md"),
    ("when something fails", "docs/instructor/troubleshooting.md"),
)


def page(command: str) -> str:
    """The docs page (a path in the checkout) that documents `command`."""
    return PAGES.get(command, INDEX)


def command_epilog(command: str) -> str:
    return f"Documentation: {page(command)} (in the attnkit checkout)."


def main_epilog() -> str:
    """Lines for argparse.RawDescriptionHelpFormatter: a guide a line; each command's --help names its own page."""
    width = max(len(path) for _, path in GUIDES)
    lines = [f"  {path:<{width}}  {what}" for what, path in GUIDES]
    return "\n".join(["Documentation (pages in the attnkit checkout; `attnkit COMMAND --help` names its own):",
                      *lines])
