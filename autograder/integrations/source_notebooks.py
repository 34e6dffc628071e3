"""The source notebooks' cells that come from the catalogue: what `make release` writes into `source/attention/`
before regenerating `release/attention/` (autograder.integrations.nbgrader_course), and what `make check-release`
finds stale.

- An overview right after each notebook's title cell: its exercises (points, time, difficulty) and the totals.
- A "What is graded" markdown cell right after each exercise's last instruction cell before its check(...) cell,
  listing every graded check of the exercise (its title in English and Chinese, its points, and whether check(...)
  shows it now or a preview of it).
- The `points` of each exercise's graded cell (its nbgrader metadata): the exercise's points, the sum of its checks'.

Points are declared once, with the checks: a change there reaches the notebooks' text and nbgrader's grades through
`make release`, and the text cannot drift from what is graded.
"""

import re
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder.checking.check_types import Exercise
from autograder.course import catalog
from autograder.course.exercises import EXERCISES

CELL_ID = "requirements-{exercise}"
OVERVIEW_ID = "overview-{notebook}"
DIFFICULTY = {1: "★☆☆", 2: "★★☆", 3: "★★★"}
DIFFICULTY_KEY = ("Difficulty · 难度: ★☆☆ follows the text · 按正文即可完成; ★★☆ needs thought about shapes and axes · "
                  "需要思考形状和维度; ★★★ puts several ideas together · 需要综合运用多个概念")
CHECK_CALL = re.compile(r'^check\("(\w+)"', re.M)
GRADE_CALL = re.compile(r"""\bgrade\(\s*["'](\w+)["']""")


def _effort(exercise: Exercise) -> tuple[int, str]:
    """(minutes, stars) of an exercise; an exercise declared without them cannot be released."""
    if exercise.minutes <= 0 or exercise.difficulty not in DIFFICULTY:
        raise ValueError(f"exercise {exercise.id!r} needs minutes=... and difficulty=1, 2 or 3 in its declaration")
    return exercise.minutes, DIFFICULTY[exercise.difficulty]


def requirements_text(exercise: Exercise) -> str:
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


def overview_text(name: str) -> str:
    """The notebook's exercises as a table: names, points, time and difficulty, with the totals."""
    exercises = [exercise for exercise in EXERCISES if exercise.notebook == name]
    total_minutes = sum(_effort(exercise)[0] for exercise in exercises)
    total_points = sum(exercise.points or 0 for exercise in exercises)
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


def _refreshed_cell(notebook: nbformat.NotebookNode, cell_id: str, text: str,
                    index_if_missing: Callable[[], int]) -> bool:
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


def _insertion_index(cells: list[nbformat.NotebookNode], check_index: int) -> int:
    """Right after the last markdown cell above the check: the exercise's own instructions."""
    markdown = [index for index in range(check_index) if cells[index].cell_type == "markdown"
                and not cells[index].get("id", "").startswith("requirements-")]
    return markdown[-1] + 1


def _refreshed_points(notebook: nbformat.NotebookNode, exercise: Exercise) -> bool:
    """Give the exercise's graded cells (nbgrader test cells calling grade("<id>", ...)) the exercise's points;
    True if one changed."""
    changed = False
    for cell in notebook.cells:
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and nbgrader.get("grade") and exercise.id in GRADE_CALL.findall(cell.source):
            if nbgrader.get("points") != exercise.points:
                nbgrader["points"] = exercise.points
                changed = True
    return changed


def refreshed(notebook: nbformat.NotebookNode, name: str) -> bool:
    """Make every cell of notebook `name` that comes from the catalogue present and current, in place: the
    overview, each exercise's "What is graded" cell and its graded cell's points. True when one changed."""
    changed = _refreshed_cell(notebook, OVERVIEW_ID.format(notebook=name[:2]), overview_text(name), lambda: 1)
    for exercise in (e for e in EXERCISES if e.notebook == name):

        def below_instructions(exercise_id: str = exercise.id) -> int:
            check_index = next(index for index, cell in enumerate(notebook.cells)
                               if cell.cell_type == "code" and exercise_id in CHECK_CALL.findall(cell.source))
            return _insertion_index(notebook.cells, check_index)

        changed |= _refreshed_cell(notebook, CELL_ID.format(exercise=exercise.id), requirements_text(exercise),
                                   below_instructions)
        changed |= _refreshed_points(notebook, exercise)
    return changed


def refresh_source_notebooks(source_dir: Path, *, write: bool = True) -> list[str]:
    """The notebooks of `source_dir` whose catalogue cells or graded points were stale, in name order; with
    `write`, each is rewritten current (without, nothing changes: what check-release reports)."""
    stale = []
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        if refreshed(notebook, path.stem):
            stale.append(path.name)
            if write:
                nbformat.write(notebook, path)
    return stale
