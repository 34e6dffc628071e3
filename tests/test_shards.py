"""`attnkit grade --shard I/N` and `attnkit merge`: three shards merged give what one unsharded run gives."""

import csv
import json
import shutil

import pytest

from autograder import cli
from autograder.course.exercises import NOTEBOOKS
from autograder.grading.shards import MANIFEST, Shard, ShardError, shard_index

FAST = ["--timeout", "10", "--memory", "1024"]
SHARDS = 3
WRONG_SOFTMAX = "def softmax_naive(x):\n    return x / x.sum()\n"
# s01..s06 fall into shards 2, 2, 0, 1, 2, 1 (see test_shard_assignment_is_a_stable_hash_of_the_id)
STUDENTS = ("s01", "s02", "s03", "s04", "s05", "s06")


def _hand_in(submitted, student, notebooks):
    folder = submitted / student / "attention"
    folder.mkdir(parents=True)
    for name, content in notebooks.items():
        (folder / f"{name}.ipynb").write_bytes(content)


def _with_wrong_softmax(solved_notebook):
    notebook = json.loads(solved_notebook)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
            cell["source"] = WRONG_SOFTMAX
    return json.dumps(notebook).encode()


@pytest.fixture(scope="module")
def graded(repo_root, tmp_path_factory):
    """A class of six, graded once unsharded and once as shards 0/3, 1/3, 2/3 merged."""
    root = tmp_path_factory.mktemp("sharded")
    submitted = root / "submitted"
    solved = {name: (repo_root / "source" / "attention" / f"{name}.ipynb").read_bytes() for name in NOTEBOOKS}
    release = {name: (repo_root / "release" / "attention" / f"{name}.ipynb").read_bytes() for name in NOTEBOOKS}
    _hand_in(submitted, "s01", solved)
    _hand_in(submitted, "s02", release)
    _hand_in(submitted, "s03", {**solved, NOTEBOOKS[0]: _with_wrong_softmax(solved[NOTEBOOKS[0]])})
    _hand_in(submitted, "s04", {NOTEBOOKS[0]: solved[NOTEBOOKS[0]], NOTEBOOKS[1]: b"not json"})
    (submitted / "s05").mkdir()
    _hand_in(submitted, "s06", {**solved, NOTEBOOKS[3]: release[NOTEBOOKS[3]]})

    whole = root / "whole"
    assert cli.main(["grade", str(submitted), "--out", str(whole), *FAST]) == 0
    shard_dirs = [root / "shards" / str(index) for index in range(SHARDS)]
    for index, out in enumerate(shard_dirs):
        assert cli.main(["grade", str(submitted), "--out", str(out), "--shard", f"{index}/{SHARDS}", *FAST]) == 0
    merged = root / "merged"
    assert cli.main(["merge", *map(str, shard_dirs), "--out", str(merged)]) == 0
    return {"root": root, "submitted": submitted, "whole": whole, "shards": shard_dirs, "merged": merged}


def _rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as stream:
        reader = csv.reader(stream)
        return next(reader), sorted(tuple(row) for row in reader)


def _manifest(out):
    return json.loads((out / MANIFEST).read_text(encoding="utf-8"))


# --- sharded grading and merge ------------------------------------------------------------------


@pytest.mark.slow
def test_merged_grades_csv_equals_the_unsharded_one(graded):
    header, rows = _rows(graded["whole"])
    merged_header, merged_rows = _rows(graded["merged"])
    assert merged_header == header
    assert merged_rows == rows  # same rows, same values, compared regardless of order
    assert [row[0] for row in rows] == list(STUDENTS)
    totals = {row[0]: row[header.index("total")] for row in rows}
    assert totals["s01"] == "100" and totals["s02"] == "0" and totals["s05"] == "0"
    assert 82 <= float(totals["s03"]) < 100 and totals["s04"] == "18" and totals["s06"] == "61"


@pytest.mark.slow
def test_every_student_is_in_exactly_one_shard(graded):
    seen = {}
    for index, out in enumerate(graded["shards"]):
        manifest = _manifest(out)
        assert manifest["shard"] == f"{index}/{SHARDS}" and manifest["complete"] is True
        _, rows = _rows(out)
        in_csv = [row[0] for row in rows]
        assert sorted(in_csv) == sorted(manifest["students"])  # a shard's grades.csv covers its students only
        assert sorted(path.stem for path in (out / "students").glob("*.json")) == sorted(in_csv)
        for student in in_csv:
            assert student not in seen, f"{student} in shards {seen[student]} and {index}"
            assert shard_index(student, SHARDS) == index
            seen[student] = index
    assert sorted(seen) == list(STUDENTS)
    assert all(any(seen[student] == index for student in seen) for index in range(SHARDS))  # none is empty here


@pytest.mark.slow
def test_merged_per_student_files_are_those_of_the_unsharded_run(graded):
    whole, merged = graded["whole"], graded["merged"]
    for student in STUDENTS:
        for relative in (f"students/{student}.json", f"gradescope/{student}/results.json", f"feedback/{student}.html"):
            assert (merged / relative).read_bytes() == (whole / relative).read_bytes(), relative
    manifest = _manifest(merged)
    assert manifest["shard"] is None and manifest["complete"] is True
    assert manifest["students"] == _manifest(graded["whole"])["students"]
    assert not list(merged.rglob(".*.tmp"))


@pytest.mark.slow
def test_grade_and_merge_write_the_class_report(graded):
    for out in (graded["whole"], graded["merged"], *graded["shards"]):
        assert (out / "class_report.html").is_file()
    page = (graded["merged"] / "class_report.html").read_text(encoding="utf-8")
    assert page == (graded["whole"] / "class_report.html").read_text(encoding="utf-8")
    assert 'data-id="normalised_without_exp" data-students="1"' in page  # s03 divides by the sum


@pytest.mark.slow
def test_rerunning_a_shard_resumes_and_grades_nothing(graded, capsys):
    out = graded["shards"][1]
    assert cli.main(["grade", str(graded["submitted"]), "--out", str(out), "--shard", f"1/{SHARDS}", *FAST]) == 0
    assert "shard 1/3: 2 students (0 graded, 2 unchanged" in capsys.readouterr().err


@pytest.mark.slow
def test_an_empty_shard_still_writes_its_outputs(graded, tmp_path, capsys):
    taken = {shard_index(student, 40) for student in STUDENTS}
    index = min(set(range(40)) - taken)
    out = tmp_path / "empty-shard"
    assert cli.main(["grade", str(graded["submitted"]), "--out", str(out), "--shard", f"{index}/40", *FAST]) == 0
    assert f"shard {index}/40: 0 students" in capsys.readouterr().err
    header, rows = _rows(out)
    assert header == _rows(graded["whole"])[0] and rows == []
    assert _manifest(out)["students"] == {} and _manifest(out)["complete"] is True
    assert "No students." in (out / "class_report.html").read_text(encoding="utf-8")


# --- the shard of a student ---------------------------------------------------------------------


def test_shard_assignment_is_a_stable_hash_of_the_id():
    # Pinned: the first 8 bytes of sha256(id) mod N, the same on every machine and Python run.
    assert [shard_index(student, 3) for student in STUDENTS] == [2, 2, 0, 1, 2, 1]
    class_of_six = {student: shard_index(student, 3) for student in STUDENTS}
    bigger_class = ["s00", *STUDENTS, "zoe", "s07"]
    assert {student: shard_index(student, 3) for student in bigger_class if student in class_of_six} == class_of_six
    assert Shard(2, 3).contains("s01") and not Shard(0, 3).contains("s01")
    assert all(shard_index(student, 1) == 0 for student in bigger_class)


@pytest.mark.parametrize(("value", "reason"), [
    ("3/3", "I must be between 0 and 2"),
    ("-1/3", "I must be between 0 and 2"),
    ("0/0", "N, the number of shards, must be at least 1"),
    ("1/-2", "N, the number of shards, must be at least 1"),
    ("a/3", "expected I/N"),
    ("1", "expected I/N"),
    ("1/3/4", "expected I/N"),
    ("1.5/3", "expected I/N"),
    ("", "expected I/N"),
])
def test_invalid_shard_values_are_refused_with_the_reason(tmp_path, capsys, value, reason):
    (tmp_path / "submitted").mkdir()
    with pytest.raises(SystemExit) as exit_status:
        cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), f"--shard={value}"])
    assert exit_status.value.code == 2
    error = capsys.readouterr().err
    assert "argument --shard" in error and reason in error, error
    assert not (tmp_path / "out").exists()
    with pytest.raises(ShardError, match=reason.split(",")[0]):
        Shard.parse(value)


@pytest.mark.slow
def test_a_shard_refuses_an_out_dir_holding_another_shard(graded, capsys):
    out = graded["shards"][0]
    before = (out / MANIFEST).read_bytes()
    assert cli.main(["grade", str(graded["submitted"]), "--out", str(out), "--shard", "1/3", *FAST]) == 2
    error = capsys.readouterr().err
    assert "already holds the outputs of shard 0/3" in error and "its own --out" in error
    assert cli.main(["grade", str(graded["submitted"]), "--out", str(out), *FAST]) == 2
    assert "already holds the outputs of shard 0/3" in capsys.readouterr().err
    assert (out / MANIFEST).read_bytes() == before


# --- merge refusals -----------------------------------------------------------------------------


def _copy(graded, tmp_path, index, name):
    copy = tmp_path / name
    shutil.copytree(graded["shards"][index], copy)
    return copy


def _edit_manifest(out, **changes):
    manifest = _manifest(out)
    manifest.update(changes)
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _merge(graded, tmp_path, *extra, shards=(0, 1, 2)):
    dirs = [str(graded["shards"][index]) for index in shards] + [str(path) for path in extra]
    return cli.main(["merge", *dirs, "--out", str(tmp_path / "merged")])


@pytest.mark.slow
def test_merge_refuses_a_missing_shard(graded, tmp_path, capsys):
    assert _merge(graded, tmp_path, shards=(0, 2)) == 2
    assert "missing shards: 1/3" in capsys.readouterr().err
    assert not (tmp_path / "merged").exists()


@pytest.mark.slow
def test_merge_refuses_a_student_twice_with_different_results(graded, tmp_path, capsys):
    copy = _copy(graded, tmp_path, 2, "shard2-again")
    record = json.loads((copy / "students" / "s01.json").read_text(encoding="utf-8"))
    record["score"] -= 5
    record["notebooks"][0]["score"] -= 5
    record["notebooks"][0]["checks"][0]["score"] = 0
    (copy / "students" / "s01.json").write_text(json.dumps(record), encoding="utf-8")
    assert _merge(graded, tmp_path, copy) == 2
    error = capsys.readouterr().err
    assert "student s01 is in" in error and "different results" in error and "100 points" in error, error


@pytest.mark.slow
def test_merge_accepts_a_student_twice_with_the_same_result(graded, tmp_path):
    copy = _copy(graded, tmp_path, 2, "shard2-again")
    assert _merge(graded, tmp_path, copy) == 0
    assert _rows(tmp_path / "merged") == _rows(graded["whole"])


@pytest.mark.parametrize(("change", "message"), [
    ({"seed": 7}, "different seeds"),
    ({"catalogue": "0" * 64}, "different check catalogues"),
    ({"shard": "1/4"}, "shards of different splits"),
    ({"complete": False}, "did not finish"),
])
@pytest.mark.slow
def test_merge_refuses_outputs_that_do_not_agree(graded, tmp_path, capsys, change, message):
    copy = _copy(graded, tmp_path, 1, "shard1-edited")
    _edit_manifest(copy, **change)
    assert cli.main(["merge", str(graded["shards"][0]), str(copy), str(graded["shards"][2]),
                     "--out", str(tmp_path / "merged")]) == 2
    error = capsys.readouterr().err
    assert message in error and len(error.splitlines()) == 1, error


@pytest.mark.slow
def test_merge_refuses_shards_graded_with_another_seed(graded, tmp_path, capsys):
    reseeded = tmp_path / "shard0-seed1"
    assert cli.main(["grade", str(graded["submitted"]), "--out", str(reseeded), "--shard", "0/3", "--seed", "1",
                     *FAST]) == 0
    capsys.readouterr()
    assert cli.main(["merge", str(reseeded), *map(str, graded["shards"][1:]), "--out", str(tmp_path / "m")]) == 2
    assert "different seeds" in capsys.readouterr().err


@pytest.mark.slow
def test_merge_refuses_what_is_not_a_grading_output(graded, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert _merge(graded, tmp_path, tmp_path / "empty") == 2
    assert "no grading.json" in capsys.readouterr().err
    assert _merge(graded, tmp_path, tmp_path / "nowhere") == 2
    assert "no such directory" in capsys.readouterr().err
    assert cli.main(["merge", *map(str, graded["shards"]), "--out", str(graded["shards"][0])]) == 2
    assert "is one of the directories to merge" in capsys.readouterr().err


@pytest.mark.slow
def test_merge_refuses_a_record_that_changed_after_grading(graded, tmp_path, capsys):
    copy = _copy(graded, tmp_path, 1, "shard1-tampered")
    (copy / "students" / "s04.json").unlink()
    assert cli.main(["merge", str(graded["shards"][0]), str(copy), str(graded["shards"][2]),
                     "--out", str(tmp_path / "merged")]) == 2
    assert "s04.json: missing or unreadable" in capsys.readouterr().err
