"""The disk holding OUT_DIR fills up: the run stops with one clear error and exit status 3, no innocent student is
marked "grader error" or written half, and the same command resumes where it stopped.

Three students (a, b, c) with empty folders (each notebook "not submitted": no child runs, the test is quick):
once with ENOSPC injected at the atomic write after a's record, once on a real tmpfs just too small for b
(as root, where mounting is allowed; skipped otherwise, failed in CI).
"""

import errno
import math
import os
import subprocess

import pytest

from autograder import cli
from autograder.outputs import records

STUDENTS = ("a", "b", "c")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _class(tmp_path):
    submitted = tmp_path / "submitted"
    for student in STUDENTS:
        (submitted / student / "attention").mkdir(parents=True)
    return submitted


def _grade(submitted, out, capsys):
    status = cli.main(["grade", str(submitted), "--out", str(out), "--workers", "1"])
    return status, capsys.readouterr().err


def _files(out):
    return sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())


def _assert_stopped_cleanly(status, stderr, out, written):
    assert status == cli.DISK_FULL == 3
    assert f"attnkit grade: the disk holding {out} is full" in stderr
    assert "free space and run the same command again: graded students are kept" in stderr
    assert "grader error" not in stderr
    files = _files(out)
    assert [name for name in files if name.startswith("students/")] == [f"students/{s}.json" for s in written]
    assert not any(name.endswith(".tmp") for name in files), files  # no half-written file is left
    assert "grades.csv" not in files  # no row for anyone it could not write
    for name in files:
        assert "grader error" not in (out / name).read_text(encoding="utf-8"), name


def _assert_resumed(status, stderr, out, skipped):
    assert status == 0, stderr
    assert f"({len(STUDENTS) - skipped} graded, {skipped} unchanged since the last run)" in stderr
    rows = (out / "grades.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == list(STUDENTS)
    assert "grader error" not in "\n".join(rows)


def test_enospc_while_writing_stops_the_run_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    submitted, out = _class(tmp_path), tmp_path / "out"
    original, full, refused = records.write_atomically, [], []

    def filling_disk(path, text):
        if full:
            refused.append(path.relative_to(out).as_posix())
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        original(path, text)
        if path.name == "a.json":
            full.append(True)  # the disk is full from now on

    monkeypatch.setattr(records, "write_atomically", filling_disk)
    status, stderr = _grade(submitted, out, capsys)
    _assert_stopped_cleanly(status, stderr, out, written=["a"])
    assert refused == ["feedback/b.html"]  # it stopped at the first refused write: nothing else was tried
    monkeypatch.setattr(records, "write_atomically", original)  # space was freed
    _assert_resumed(*_grade(submitted, out, capsys), out, skipped=1)


def test_other_write_errors_still_mark_only_that_student(tmp_path, capsys, monkeypatch):
    """Not a full disk (EACCES on b's page): b is a grader error, the others are graded, exit status 1."""
    submitted, out = _class(tmp_path), tmp_path / "out"
    original = records.write_atomically

    def refusing(path, text):
        if path.name == "b.html":
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        original(path, text)

    monkeypatch.setattr(records, "write_atomically", refusing)
    status, stderr = _grade(submitted, out, capsys)
    assert status == cli.GRADER_FAILED and "b: grader error" in stderr
    assert (out / "students" / "c.json").exists()


def _pages(*paths):
    return sum(math.ceil(path.stat().st_size / PAGE) for path in paths)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A tmpfs mounted at tmp_path/out (root only); yields a function that resizes it, in bytes."""
    out = tmp_path / "out"
    out.mkdir()

    def mount(*options):
        return subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(out)],
                              capture_output=True, text=True, check=False)

    result = mount(f"size={PAGE}") if os.geteuid() == 0 else None
    if result is None or result.returncode != 0:
        why = "not root" if result is None else result.stderr.strip()
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot mount a small tmpfs for OUT_DIR in CI: {why}")
        pytest.skip(f"cannot mount a small tmpfs for OUT_DIR: {why}")
    try:
        yield out, lambda size: mount("remount", f"size={size}")
    finally:
        subprocess.run(["umount", str(out)], check=False)


def test_a_real_full_disk_stops_the_run_and_a_rerun_resumes(tmp_path, capsys, small_tmpfs):
    out, resize = small_tmpfs
    submitted = _class(tmp_path)
    # How much one student takes: grade the class once on the normal disk.
    _grade(submitted, tmp_path / "measure", capsys)
    measure = tmp_path / "measure"
    manifest = _pages(measure / "grading.json")
    one_student = _pages(measure / "feedback" / "a.html", measure / "gradescope" / "a" / "results.json",
                         measure / "students" / "a.json")
    # Room for the manifest, student a, and b's first file (its page): b's next write finds the disk full.
    assert resize((manifest + one_student + _pages(measure / "feedback" / "b.html") + 1) * PAGE).returncode == 0
    status, stderr = _grade(submitted, out, capsys)
    _assert_stopped_cleanly(status, stderr, out, written=["a"])
    assert resize(64 * 2**20).returncode == 0  # the instructor frees space
    _assert_resumed(*_grade(submitted, out, capsys), out, skipped=1)
