"""What the code needs reaches the sandbox first, and one student's volume costs nobody else anything.

One class, `attnkit grade`, NB04 only for the flood:
  - cluttered: the four solved notebooks in attention/, beside a virtualenv of 1,600 files, 720 figures, a
    checkpoint, data, and the student's own package `mha_utils`, which notebook 04 imports split_heads and
    merge_heads from. The copy budget (500 files) would be spent on figures before the package if it went by name:
    full marks, and one note says what was left out;
  - flood: notebook 04 solved beside 200,000 small files: graded at full marks, one summary note;
  - honest: notebook 04 solved, graded after the flood with the same budget: full marks.
"""

import time

import pytest
from messy_layouts import PNG, cluttered

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options, with_causes_left_out
from autograder.isolation import workspace
from autograder.isolation.limits import Limits

NB04 = NOTEBOOKS[3]
POINTS = {notebook: sum(e.points for e in EXERCISES if e.notebook == notebook) for notebook in NOTEBOOKS}
LIMITS = Limits(timeout=60.0, memory_mb=1024)
FLOOD = 200_000
def _flood(folder, repo_root):
    attention = folder / "attention"
    attention.mkdir(parents=True)
    (attention / f"{NB04}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{NB04}.ipynb").read_bytes())
    for number in range(FLOOD):
        (attention / f"x_{number:06}.txt").touch()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    submitted = tmp_path_factory.mktemp("cluttered") / "submitted"
    cluttered(submitted / "a_cluttered", repo_root)
    _flood(submitted / "b_flood", repo_root)
    honest = submitted / "c_honest" / "attention"
    honest.mkdir(parents=True)
    (honest / f"{NB04}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{NB04}.ipynb").read_bytes())
    started = time.monotonic()
    summary = classroom.grade_class(submitted, submitted.parent / "out", Options(limits=LIMITS))
    seconds = time.monotonic() - started
    documents = {document["student_id"]: document for document in summary.documents}
    return summary, documents, seconds, submitted.parent / "out"


def _notebook(document, notebook=NB04):
    return next(entry for entry in document["notebooks"] if entry["notebook"] == notebook)


def _failed(notebook):
    return [check["message"] for check in notebook["checks"] if check["status"] != "passed"]


@pytest.mark.slow
def test_the_cluttered_folder_scores_full_marks(graded):
    summary, documents, _, _ = graded
    assert not summary.grader_errors
    for notebook in NOTEBOOKS:
        entry = _notebook(documents["a_cluttered"], notebook)
        assert entry["score"] == POINTS[notebook], (notebook, _failed(entry), entry["notes"])


@pytest.mark.slow
def test_what_was_left_out_is_one_note_with_counts(graded):
    _, documents, _, _ = graded
    notes = _notebook(documents["a_cluttered"])["notes"]
    left_out = [note for note in notes if note.startswith(workspace.NOT_COPIED_NOTE)]
    assert len(left_out) == 1 and len(notes) <= 3, notes
    [note] = left_out
    # 500 files at most: the package's 2 first, then the data, then 497 of the 720 figures.
    assert "223 images (" in note and "1 checkpoint (model.pt)" in note, note
    assert "a virtualenv (.venv/) with 1,600 files" in note, note
    assert "mha_utils" not in note and "tokens.csv" not in note, note


@pytest.mark.slow
def test_two_hundred_thousand_files_grade_in_bounded_time_with_one_note(graded):
    _, documents, seconds, _ = graded
    flood = _notebook(documents["b_flood"])
    assert flood["score"] == POINTS[NB04], (_failed(flood), flood["notes"][:5])
    notes = [note for note in flood["notes"] if "copied" in note]
    assert len(notes) == 1 and f"{FLOOD - workspace.MAX_COPY_FILES:,} data files" in notes[0], notes
    assert len(flood["notes"]) <= 2, flood["notes"]  # and intake's: it looked at the first 10,000 entries
    assert sum(len(note) for note in flood["notes"]) < 2_000
    # The whole class (three students, six notebooks, 200,000 files listed and 500 copied): minutes per
    # note used to be spent on the flood's notes alone.
    assert seconds < 240, seconds


@pytest.mark.slow
def test_the_classmate_graded_after_the_flood_keeps_full_marks(graded):
    _, documents, _, _ = graded
    honest = _notebook(documents["c_honest"])
    assert honest["score"] == POINTS[NB04] and honest["status"] == "graded", (_failed(honest), honest["notes"])


def test_the_copy_puts_what_the_code_imports_and_names_first(tmp_path):
    folder, target = tmp_path / "student", tmp_path / "work"
    (folder / "figures").mkdir(parents=True)
    (folder / "zz_pkg").mkdir()
    target.mkdir()
    for number in range(30):
        (folder / "figures" / f"f{number:02}.png").write_bytes(PNG)
    (folder / "zz_pkg" / "__init__.py").write_text("")
    (folder / "zz_pkg" / "weights.json").write_text("{}")  # package data goes with its package
    (folder / "zz_pkg" / "core.py").write_text("X = 1\n")
    (folder / "zz_named.csv").write_text("a,b\n")
    (folder / "aa_unnamed.txt").write_text("x\n")
    code = "from zz_pkg.core import X\nimport pandas as pd\ndf = pd.read_csv('./zz_named.csv')\n"
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, target, workspace._CopyBudget(files=4, bytes=2**20), space, code)
    copied = sorted(str(path.relative_to(target)) for path in target.rglob("*") if path.is_file())
    assert copied == ["zz_named.csv", "zz_pkg/__init__.py", "zz_pkg/core.py", "zz_pkg/weights.json"]
    assert (target / "figures").is_dir()  # the folder is there for the notebook's own savefig
    [note] = space.student_notes
    assert "30 images (figures/f00.png, figures/f01.png, figures/f02.png, and 27 more)" in note, note
    assert "1 data file (aa_unnamed.txt)" in note, note


def test_a_flood_of_folders_and_files_is_scanned_up_to_the_cap_and_said_so(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace, "MAX_SCAN_ENTRIES", 50)
    folder, target = tmp_path / "student", tmp_path / "work"
    folder.mkdir()
    target.mkdir()
    for number in range(80):
        (folder / f"n{number:02}.txt").touch()
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, target, workspace._CopyBudget(files=500, bytes=2**20), space)
    assert len(list(target.iterdir())) == 50
    assert space.student_notes == [note for note in space.student_notes if "past the first 50 files" in note]
    assert len(space.student_notes) == 1


def test_a_cell_whose_module_was_left_out_says_so(tmp_path):
    folder, target = tmp_path / "student", tmp_path / "work"
    (folder / "big_pkg").mkdir(parents=True)
    target.mkdir()
    for number in range(12):
        (folder / "big_pkg" / f"m{number:02}.py").write_text("X = 1\n")
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, target, workspace._CopyBudget(files=10, bytes=2**20), space, "import big_pkg.m11")
    notes = with_causes_left_out([
        "cell 3: ModuleNotFoundError: No module named 'big_pkg.m11'",
        "cell 4: NameError: name 'split_heads' is not defined",
        "cell 5: ValueError: too many values to unpack",
        *space.student_notes,
    ])
    assert notes[0].endswith("(big_pkg is beside the notebook but was not copied for grading, see the note on what "
                             "was left out)"), notes
    assert "some files beside the notebook were not copied for grading" in notes[1], notes
    assert notes[2] == "cell 5: ValueError: too many values to unpack"
    assert "2 Python files (big_pkg/m10.py, big_pkg/m11.py)" in notes[3], notes


def test_nothing_left_out_explains_nothing():
    notes = ["cell 4: NameError: name 'split_heads' is not defined"]
    assert with_causes_left_out(notes) == notes
    images_only = f"{workspace.NOT_COPIED_NOTE}: 3 images (a.png, b.png, c.png) (the student's Python files ...)"
    assert with_causes_left_out([*notes, images_only]) == [*notes, images_only]
