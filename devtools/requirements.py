"""Every graded requirement, stated where the student reads it: one "What is graded" cell per exercise, and an
overview of each notebook's exercises (points, time, difficulty) under its title.

    python -m devtools.requirements [--check]

Writes, in each source notebook, a markdown cell right after the exercise's last instruction cell before its
check(...) cell, listing every graded check of the exercise (its title in English and Chinese, its points, and
whether check(...) shows it now or a preview of it), and an overview cell right after the notebook's title cell.
Both come from the catalogue, so the text cannot drift from what is graded; `make release` runs this before
regenerating release/. With --check, changes nothing and exits 1 when a cell is missing or stale.
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
OVERVIEW_ID = "overview-{notebook}"
DIFFICULTY = {1: "★☆☆", 2: "★★☆", 3: "★★★"}
DIFFICULTY_KEY = ("Difficulty · 难度: ★☆☆ follows the text · 按正文即可完成; ★★☆ needs thought about shapes and axes · "
                  "需要思考形状和维度; ★★★ puts several ideas together · 需要综合运用多个概念")
CHECK_CALL = re.compile(r'^check\("(\w+)"', re.M)


def _effort(exercise):
    """(minutes, stars) of an exercise; an exercise declared without them cannot be released."""
    if exercise.minutes <= 0 or exercise.difficulty not in DIFFICULTY:
        raise ValueError(f"exercise {exercise.id!r} needs minutes=... and difficulty=1, 2 or 3 in its declaration")
    return exercise.minutes, DIFFICULTY[exercise.difficulty]


def requirements_text(exercise):
    """The cell's markdown: the exercise's graded checks, each title in both languages with its points."""
    minutes, stars = _effort(exercise)
    lines = [f"**What is graded · 评分内容** — {exercise.title['en']} · {exercise.title['zh']}: "
             f"{exercise.points:g} points · 共 {exercise.points:g} 分 · about {minutes} min · 约 {minutes} 分钟 · "
             f"{stars}", ""]
    for check in catalog.checks_of(exercise.id):
        title = catalog.MESSAGES[f"{check.id}.title"]
        when_en, when_zh = (("on new values at grading; check(...) runs a preview now",
                             "评分时用新的数值检查；check(...) 现在运行它的预览") if check.hidden
                            else ("check(...) runs it now", "check(...) 现在就运行"))
        lines.append(f"- {title['en']} ({check.points:g} pt, {when_en})  ")
        lines.append(f"  {title['zh']}（{check.points:g} 分，{when_zh}）")
    return "\n".join(lines)


def overview_text(name):
    """The notebook's exercises as a table: names, points, time and difficulty, with the totals."""
    exercises = [exercise for exercise in EXERCISES if exercise.notebook == name]
    total_minutes = sum(_effort(exercise)[0] for exercise in exercises)
    total_points = sum(exercise.points for exercise in exercises)
    lines = [f"**Exercises · 练习** — about {total_minutes} minutes of exercises; allow as long again for reading "
             f"and running the other cells · 练习约需 {total_minutes} 分钟，阅读和运行其余单元格另需差不多同样的时间",
             "",
             "| Exercise / 练习 | Function or class / 函数或类 | Points / 分值 | Time / 用时 | Difficulty / 难度 |",
             "|---|---|---|---|---|"]
    for exercise in exercises:
        minutes, stars = _effort(exercise)
        names = ", ".join(f"`{name}`" for name in dict.fromkeys(exercise.names))
        lines.append(f"| {exercise.title['en']} / {exercise.title['zh']} | {names} | {exercise.points:g} | "
                     f"~{minutes} min | {stars} |")
    lines += [f"| **Total / 合计** | | **{total_points:g}** | **~{total_minutes} min** | |", "", DIFFICULTY_KEY]
    return "\n".join(lines)


def _refreshed_cell(notebook, cell_id, text, index_if_missing):
    """Make the cell `cell_id` hold `text`, inserting it at the index `index_if_missing()` gives; True if changed."""
    existing = [cell for cell in notebook.cells if cell.get("id") == cell_id]
    if existing:
        if existing[0].source == text:
            return False
        existing[0].source = text
        return True
    cell = nbformat.v4.new_markdown_cell(text)
    cell.id = cell_id
    notebook.cells.insert(index_if_missing(), cell)
    return True


def _insertion_index(cells, check_index):
    """Right after the last markdown cell above the check: the exercise's own instructions."""
    markdown = [index for index in range(check_index) if cells[index].cell_type == "markdown"
                and not cells[index].get("id", "").startswith("requirements-")]
    return markdown[-1] + 1


def refreshed(notebook, name):
    """Make every requirements cell of notebook `name` present and current, in place; True when one changed."""
    changed = _refreshed_cell(notebook, OVERVIEW_ID.format(notebook=name[:2]), overview_text(name), lambda: 1)
    for exercise in (e for e in EXERCISES if e.notebook == name):

        def below_instructions(exercise_id=exercise.id):
            check_index = next(index for index, cell in enumerate(notebook.cells)
                               if cell.cell_type == "code" and exercise_id in CHECK_CALL.findall(cell.source))
            return _insertion_index(notebook.cells, check_index)

        changed |= _refreshed_cell(notebook, CELL_ID.format(exercise=exercise.id), requirements_text(exercise),
                                   below_instructions)
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
