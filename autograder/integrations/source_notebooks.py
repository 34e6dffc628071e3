"""The source notebooks' cells that come from the catalogue: what `make release` writes into `source/attention/`
before regenerating `release/attention/` (autograder.integrations.nbgrader_course), and what `make check-release`
finds stale.

- An overview right after each notebook's title cell: its exercises (points, time, difficulty) and the totals.
- In a notebook whose classes are graded on the module contract, the contract explained once, in plain words (what
  each promise is and why a module keeps it), right after the overview: the "What is graded" bullets then name
  each promise in a few words and point here with "(module contract)".
- A "What is graded" markdown cell right after each exercise's last instruction cell before its check(...) cell,
  listing every graded check of the exercise (its title in English and Chinese, its points, and whether check(...)
  shows it now or a preview of it).
- The `points` of each exercise's graded cell (its nbgrader metadata): the exercise's points, the sum of its checks'.
- The points in each exercise's heading ("### Exercise 01-1 · Naive softmax (5 points)", "### 练习 01-1 · …（5 分）"),
  the nearest such heading above its "What is graded" cell: the rest of the heading is the notebook's own text.

Points are declared once, with the checks: a change there reaches the notebooks' text and nbgrader's grades through
`make release`, and the text cannot drift from what is graded.
"""

import re
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder.checking.check_types import Exercise
from autograder.course import catalog
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.course.module_contract.probe import SPECS

__all__ = ["DIFFICULTY", "refresh_source_notebooks", "refreshed", "requirements_text"]

CELL_ID = "requirements-{exercise}"
OVERVIEW_ID = "overview-{notebook}"
CONTRACT_ID = "contract-{notebook}"
DIFFICULTY = {1: "★☆☆", 2: "★★☆", 3: "★★★"}
DIFFICULTY_KEY = ("Difficulty: ★☆☆ follows the text; ★★☆ needs thought about shapes and axes; ★★★ puts several ideas "
                  "together · 难度：★☆☆ 按正文即可完成；★★☆ 需要思考形状和维度；★★★ 需要综合运用多个概念")
# The preview's words, as check(...) titles a preview (autograder.course.catalog.PREVIEW_TITLE).
WHEN_HIDDEN = ("check(...) shows a preview of these now; graded later on new values",
               "check(...) 现在显示它们的预览；评分时换用新的数值")
WHEN_PUBLIC = ("check(...) runs these now", "check(...) 现在就运行这些")
CHECK_CALL = re.compile(r'^check\("(\w+)"', re.M)
GRADE_CALL = re.compile(r"""\bgrade\(\s*["'](\w+)["']""")
HEADING = re.compile(r"^#{1,4} (?:Exercise|练习) ", re.M)
HEADING_POINTS = (re.compile(r"^(#{1,4} Exercise .*\()\d+(?:\.\d+)? points?(\)\s*)$", re.M),
                  re.compile(r"^(#{1,4} 练习 .*（)\d+(?:\.\d+)? 分(）\s*)$", re.M))


def _effort(exercise: Exercise) -> tuple[int, str]:
    """(minutes, stars) of an exercise; an exercise declared without them cannot be released."""
    if exercise.minutes <= 0 or exercise.difficulty not in DIFFICULTY:
        raise ValueError(f"exercise {exercise.id!r} needs minutes=... and difficulty=1, 2 or 3 in its declaration")
    return exercise.minutes, DIFFICULTY[exercise.difficulty]


def requirements_text(exercise: Exercise) -> str:
    """The cell's markdown: the exercise's graded checks, each title in both languages with its points, those
    check(...) runs now first, then those it previews (graded later on new values)."""
    minutes, stars = _effort(exercise)
    lines = [f"**What is graded · 评分内容** — {exercise.title['en']} · {exercise.title['zh']} — "
             f"{exercise.points:g} points · 共 {exercise.points:g} 分 · about {minutes} min · 约 {minutes} 分钟 · "
             f"{stars}", ""]
    checks = catalog.checks_of(exercise.id)
    for (when_en, when_zh), group in ((WHEN_PUBLIC, [c for c in checks if not c.hidden]),
                                      (WHEN_HIDDEN, [c for c in checks if c.hidden])):
        if group:
            lines += [f"*{when_en} · {when_zh}：*", ""]
        for check in group:
            title = catalog.MESSAGES[f"{check.id}.title"]
            lines.append(f"- {title['en']} ({check.points:g} pt)  ")
            lines.append(f"  {title['zh']}（{check.points:g} 分）")
        if group:
            lines.append("")
    return "\n".join(lines).rstrip()


def _overview_text(name: str) -> str:
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


def _contract_text(name: str) -> str:
    """The module contract in plain words, for notebook `name`: what each promise is and why; "" when no class of
    the notebook is graded on it."""
    specs = [spec for spec in SPECS if EXERCISES_BY_ID[spec.exercise].notebook == name]
    if not specs:
        return ""
    masked, dropout = any(spec.causal for spec in specs), any(spec.has_dropout for spec in specs)
    en = ["**The module contract · 模块约定** — The classes of this notebook are PyTorch modules, and a module is used "
          "in more ways than one call in a notebook: it is trained, switched between training and evaluation, moved "
          "to a GPU, saved and loaded again. Beyond its output, each class is graded on the few promises every "
          "PyTorch module keeps, the bullets marked *(module contract)* under \"What is graded\":",
          "",
          "- **its parameters are the ones its constructor promises**, with the given names and sizes, so that saved "
          "weights load into it;"]
    if dropout:
        en.append("- **dropout acts in training mode only**: after `model.eval()` the same input always gives the "
                  "same output, as a trained model must when it is used;")
    kept = "its weights, and its mask registered as a buffer," if masked else "its weights"
    en += [f"- **what it keeps moves with it**: after `.to(...)` to another device or dtype, {kept} are there too, "
           "so forward runs there. Where there is no GPU the grader uses PyTorch's *meta* device, which follows "
           "shapes and dtypes without computing any number;",
           "- **forward only reads the module**: called again and again, on inputs of different lengths, it changes no "
           "parameter or buffer, so its `state_dict()` still loads into a fresh module that then gives the same "
           "output."]
    zh = ["**模块约定 · The module contract** — 本 notebook 中的类都是 PyTorch 模块，而模块的用法远不止在 notebook "
          "里调用一次：它会被训练、在训练模式和 eval 模式之间切换、移到 GPU 上、保存后再载入。因此除了输出之外，"
          "每个类还要遵守每个 PyTorch 模块都遵守的几条约定，也就是“评分内容”中标有 *（模块约定）* 的各项：",
          "",
          "- **参数与构造函数的约定一致**：名字和大小都与给定的一致，保存的权重才能载入；"]
    if dropout:
        zh.append("- **dropout 只在训练模式下起作用**：调用 `model.eval()` 之后，同一输入总是得到同一输出，"
                  "使用训练好的模型时正需要这样；")
    kept_zh = "它的权重以及注册为 buffer 的掩码" if masked else "它的权重"
    zh += [f"- **模块保存的东西随模块移动**：用 `.to(...)` 移到其他设备或 dtype 之后，{kept_zh}也在那里，forward "
           "才能在那里运行。没有 GPU 时，评分程序使用 PyTorch 的 *meta* 设备，它只跟踪形状和 dtype，不计算任何数值；",
           "- **forward 只读取模块**：反复调用、输入长度各不相同时，它不修改任何参数或 buffer，所以它的 `state_dict()` "
           "仍能载入新建的模块，并给出相同的输出。"]
    return "\n".join([*en, "", *zh])


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


def _refreshed_heading(notebook: nbformat.NotebookNode, exercise: Exercise) -> bool:
    """The exercise's points in its heading cell (the nearest markdown cell with an exercise heading above its "What
    is graded" cell); True if they changed."""
    requirements = next(index for index, cell in enumerate(notebook.cells)
                        if cell.get("id") == CELL_ID.format(exercise=exercise.id))
    heading = next((cell for cell in reversed(notebook.cells[:requirements])
                    if cell.cell_type == "markdown" and HEADING.search(cell.source)), None)
    if heading is None:
        return False
    english = f"{exercise.points:g} point{'' if exercise.points == 1 else 's'}"
    text = HEADING_POINTS[0].sub(lambda match: f"{match[1]}{english}{match[2]}", heading.source)
    text = HEADING_POINTS[1].sub(lambda match: f"{match[1]}{exercise.points:g} 分{match[2]}", text)
    if text == heading.source:
        return False
    heading.source = text
    return True


def refreshed(notebook: nbformat.NotebookNode, name: str) -> bool:
    """Make every cell of notebook `name` that comes from the catalogue present and current, in place: the
    overview, each exercise's "What is graded" cell, its heading's points and its graded cell's points. True when one
    changed."""
    changed = _refreshed_cell(notebook, OVERVIEW_ID.format(notebook=name[:2]), _overview_text(name), lambda: 1)
    if contract := _contract_text(name):
        changed |= _refreshed_cell(notebook, CONTRACT_ID.format(notebook=name[:2]), contract, lambda: 2)
    for exercise in (e for e in EXERCISES if e.notebook == name):

        def below_instructions(exercise_id: str = exercise.id) -> int:
            check_index = next(index for index, cell in enumerate(notebook.cells)
                               if cell.cell_type == "code" and exercise_id in CHECK_CALL.findall(cell.source))
            return _insertion_index(notebook.cells, check_index)

        changed |= _refreshed_cell(notebook, CELL_ID.format(exercise=exercise.id), requirements_text(exercise),
                                   below_instructions)
        changed |= _refreshed_heading(notebook, exercise)
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
