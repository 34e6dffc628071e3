"""Every graded requirement, stated where the student reads it: one "What is graded" cell per exercise.

    python -m devtools.requirements [--check]

Writes, in each source notebook, a markdown cell right after the exercise's last instruction cell before its
check(...) cell, listing every graded check of the exercise (its title in English and Chinese, its points, and
whether check(...) shows it now or a preview of it). The titles come from the catalogue, so the text cannot drift
from what is graded; `make release` runs this before regenerating release/. With --check, changes nothing and
exits 1 when a cell is missing or stale.
"""

import argparse
import re
import sys
from pathlib import Path

import nbformat

from autograder.course import catalog
from autograder.course.exercises import EXERCISES

SOURCE_DIR = Path(__file__).resolve().parents[1] / "source" / "attention"
CELL_ID = "requirements-{exercise}"
CHECK_CALL = re.compile(r'^check\("(\w+)"', re.M)


def requirements_text(exercise):
    """The cell's markdown: the exercise's graded checks, each title in both languages with its points."""
    lines = [f"**What is graded · 评分内容** — {exercise.title['en']} · {exercise.title['zh']}: "
             f"{exercise.points:g} points · 共 {exercise.points:g} 分", ""]
    for check in catalog.checks_of(exercise.id):
        title = catalog.MESSAGES[f"{check.id}.title"]
        when_en, when_zh = (("on new values at grading; check(...) runs a preview now",
                             "评分时用新的数值检查；check(...) 现在运行它的预览") if check.hidden
                            else ("check(...) runs it now", "check(...) 现在就运行"))
        lines.append(f"- {title['en']} ({check.points:g} pt, {when_en})  ")
        lines.append(f"  {title['zh']}（{check.points:g} 分，{when_zh}）")
    return "\n".join(lines)


def _insertion_index(cells, check_index):
    """Right after the last markdown cell above the check: the exercise's own instructions."""
    markdown = [index for index in range(check_index) if cells[index].cell_type == "markdown"
                and not cells[index].get("id", "").startswith("requirements-")]
    return markdown[-1] + 1


def refreshed(notebook, name):
    """Make every requirements cell of notebook `name` present and current, in place; True when one changed."""
    changed = False
    for exercise in (e for e in EXERCISES if e.notebook == name):
        cell_id = CELL_ID.format(exercise=exercise.id)
        text = requirements_text(exercise)
        existing = [cell for cell in notebook.cells if cell.get("id") == cell_id]
        if existing:
            if existing[0].source != text:
                existing[0].source = text
                changed = True
            continue
        check_index = next(index for index, cell in enumerate(notebook.cells)
                           if cell.cell_type == "code" and exercise.id in CHECK_CALL.findall(cell.source))
        cell = nbformat.v4.new_markdown_cell(text)
        cell.id = cell_id
        notebook.cells.insert(_insertion_index(notebook.cells, check_index), cell)
        changed = True
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a cell is missing or stale")
    args = parser.parse_args(argv)
    stale = []
    for path in sorted(SOURCE_DIR.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        if refreshed(notebook, path.stem):
            stale.append(path.name)
            if not args.check:
                nbformat.write(notebook, path)
    verb = "stale" if args.check else "updated"
    print(f"{verb}: {', '.join(stale)}" if stale else "every requirements cell is current")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
