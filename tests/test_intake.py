"""autograder.grading.intake: which file is which notebook, never through a link, zips unpacked safely.

The resolver alone (nothing is graded here): what a student with a weekend puts in their folder, and the
layouts honest students really hand in. tests/test_submission_files.py grades such a class end to end.
"""

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from autograder.course.exercises import NOTEBOOKS
from autograder.grading import intake
from autograder.grading.intake import open_submission, student_folders
from autograder.isolation.notebook_plan import NotebookProblem, plan_notebook, read_submitted, submitted_sha256

NB01 = NOTEBOOKS[0]
REPO = Path(__file__).resolve().parents[1]
SOLVED = REPO / "source" / "attention" / f"{NB01}.ipynb"
RELEASED = REPO / "release" / "attention" / f"{NB01}.ipynb"


def other_work():
    """NB01 solved, with one more code cell: edited work that differs from SOLVED."""
    document = json.loads(SOLVED.read_text(encoding="utf-8"))
    document["cells"].append({"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [],
                              "execution_count": None})
    return json.dumps(document).encode()


def student(tmp_path, files, name="student"):
    """A student folder: {relative path: bytes | Path (copied)}."""
    folder = tmp_path / "submitted" / name
    folder.mkdir(parents=True)
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.read_bytes() if isinstance(content, Path) else content)
    return folder


def located(folder, notebook=NB01):
    with open_submission(folder) as submission:
        return submission.located[notebook], submission


# --- links: never followed, always reported ---------------------------------------------------------------

def test_a_notebook_linked_to_the_solution_is_not_read(tmp_path):
    folder = student(tmp_path, {})
    (folder / "attention").mkdir()
    (folder / "attention" / f"{NB01}.ipynb").symlink_to(SOLVED)
    found, submission = located(folder)
    assert found.path is None
    assert f"attention/{NB01}.ipynb is a symbolic link: not followed" in found.reason
    assert submission.notes == (f"attention/{NB01}.ipynb is a symbolic link: not followed",)


@pytest.mark.parametrize("relative", [f"attention/{NB01}.ipynb", "attention/answers.ipynb.txt"])
def test_a_hard_link_to_a_file_outside_the_submission_is_not_graded(tmp_path, relative):
    """A hard link made to the instructor's solved notebook (by exact name, or to be found by content) is not the
    student's own file: refused like a symbolic link; one whose every name lies inside the folder is theirs."""
    outside = tmp_path / "instructor" / f"{NB01}.ipynb"
    outside.parent.mkdir()
    outside.write_bytes(SOLVED.read_bytes())
    folder = student(tmp_path, {})
    (folder / "attention").mkdir()
    os.link(outside, folder / relative)
    found, submission = located(folder)
    assert found.path is None
    assert submission.notes == (f"{relative} is a hard link to a file outside the submission: not graded",)
    outside.unlink()  # now every name of the file is inside the student's folder
    (folder / "attention" / "again.txt").hardlink_to(folder / relative)
    found, submission = located(folder)
    assert found.path == folder / relative and not submission.notes


def test_an_attention_folder_linked_to_the_source_is_not_entered(tmp_path):
    folder = student(tmp_path, {})
    (folder / "attention").symlink_to(REPO / "source" / "attention", target_is_directory=True)
    with open_submission(folder) as submission:
        assert all(found.path is None for found in submission.located.values())
        assert all("attention is a symbolic link: not followed" in found.reason
                   for found in submission.located.values())
        assert submission.files == ()


def test_a_student_folder_linked_to_a_classmates_is_not_entered(tmp_path):
    alice = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED}, "alice")
    (alice.parent / "mallory").symlink_to(alice, target_is_directory=True)
    assert [folder.name for folder in student_folders(alice.parent)] == ["alice", "mallory"]
    with open_submission(alice.parent / "mallory") as submission:
        assert all(found.path is None and found.reason == "not submitted (mallory/ is a symbolic link: not followed)"
                   for found in submission.located.values())


def test_a_link_to_a_classmates_notebook_is_not_read(tmp_path):
    alice = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED}, "alice")
    mallory = student(tmp_path, {}, "mallory")
    (mallory / "attention").mkdir()
    (mallory / "attention" / f"{NB01}.ipynb").symlink_to(Path("../../alice/attention") / f"{NB01}.ipynb")
    assert (mallory / "attention" / f"{NB01}.ipynb").read_bytes() == SOLVED.read_bytes()  # the link works
    found, _ = located(mallory)
    assert found.path is None and "is a symbolic link: not followed" in found.reason
    assert located(alice)[0].path == alice / "attention" / f"{NB01}.ipynb"


def test_a_linked_copy_beside_the_untouched_release_is_not_the_edited_one(tmp_path):
    """The copy rule must not turn a link into "the only edited copy"."""
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": RELEASED})
    (folder / "attention" / f"{NB01}-Copy1.ipynb").symlink_to(SOLVED)
    found, _ = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb"
    assert f"attention/{NB01}-Copy1.ipynb is a symbolic link: not followed" in found.notes


def test_a_folder_one_down_that_is_a_link_is_not_entered(tmp_path):
    folder = student(tmp_path, {})
    (folder / "attention").mkdir()
    (folder / "attention" / "attention").symlink_to(REPO / "source" / "attention", target_is_directory=True)
    found, _ = located(folder)
    assert found.path is None and "attention/attention is a symbolic link: not followed" in found.reason


def test_reading_refuses_a_link_swapped_in_after_the_folder_was_looked_at(tmp_path):
    """The race: the file was a regular file when listed; O_NOFOLLOW at open time is what counts."""
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED})
    with open_submission(folder) as submission:
        path = submission.located[NB01].path
        path.unlink()
        path.symlink_to(SOLVED)
        for read in (read_submitted, submitted_sha256, plan_notebook):
            with pytest.raises(NotebookProblem, match="is a symbolic link: not followed"):
                read(path)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    folder = student(tmp_path, {})
    (folder / "attention").mkdir()
    os.mkfifo(folder / "attention" / f"{NB01}.ipynb")
    with pytest.raises(NotebookProblem, match="not a file"):
        read_submitted(folder / "attention" / f"{NB01}.ipynb")


# --- size caps before any read ------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_sparse_4_gb_notebook_is_refused_without_being_read(tmp_path):
    """fstat on the opened file decides: peak memory stays far below the file's size (`attnkit grade`'s
    submission hash included, which used to read the whole file first: 4.35 GB)."""
    folder = student(tmp_path, {f"attention/{NB01}-Copy1.ipynb": SOLVED})
    (folder / "attention" / f"{NB01}.ipynb").touch()
    os.truncate(folder / "attention" / f"{NB01}.ipynb", 4 * 2**30)
    alone = student(tmp_path, {}, "only_the_sparse_file")
    (alone / "attention").mkdir()
    # A sparse file of its own (a hard link to the first one would now be refused: a name outside this folder).
    (alone / "attention" / f"{NB01}.ipynb").touch()
    os.truncate(alone / "attention" / f"{NB01}.ipynb", 4 * 2**30)
    script = textwrap.dedent(f"""
        import resource, sys
        from autograder.grading.intake import open_submission
        from autograder.isolation.notebook_plan import NotebookProblem, read_submitted, submitted_sha256
        path = {str(folder / "attention" / f"{NB01}.ipynb")!r}
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for read in (read_submitted, submitted_sha256):
            try:
                read(path)
                sys.exit("read a 4 GB file")
            except NotebookProblem as problem:
                assert "larger than 512 MB" in str(problem), problem
        with open_submission({str(folder)!r}) as submission:  # two candidates: both are looked into
            print(submission.located[{NB01!r}].notes[0])
        import contextlib, tempfile
        from autograder.grading import classroom
        with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
            alone = classroom.open_student(classroom.Path({str(alone)!r}), 0, "", scratch, stack)  # the submission hash
            assert alone.located[{NB01!r}].path is not None  # graded (and refused there), so hashed here
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=False)
    assert run.returncode == 0, run.stderr
    note, grown_mb = run.stdout.splitlines()
    assert f"graded attention/{NB01}-Copy1.ipynb" in note and "not a readable notebook" in note
    assert int(grown_mb) < 100, f"peak RSS grew by {grown_mb} MB"


def test_a_file_growing_while_it_is_read_is_refused_past_its_fstat_size(tmp_path, monkeypatch):
    """A file that grows past what fstat said is refused, and the reader stops at fstat's size + 1."""
    path = tmp_path / f"{NB01}.ipynb"
    path.write_bytes(b"{}" * 10)
    asked = []
    readv = os.readv

    def growing_readv(fd, buffers):
        asked.append(sum(len(buffer) for buffer in buffers))
        with open(path, "ab") as grow:  # the student's process appends while the grader reads
            grow.write(b" " * 1000)
        return readv(fd, buffers)

    monkeypatch.setattr(os, "readv", growing_readv)
    with pytest.raises(NotebookProblem, match="changed while it was read"):
        read_submitted(path)
    assert sum(asked) <= 21


# --- honest layouts, graded with a note saying which file and why -----------------------------------------

@pytest.mark.parametrize(("relative", "note"), [
    (f"attention/attention/{NB01}.ipynb", "(not in an attention/ folder)"),
    (f"{NB01}.ipynb", "(not in an attention/ folder)"),
    (f"attention/{NB01}.ipynb.txt", "(no file of that exact name was handed in)"),
    (f"attention/{NB01} (1).ipynb", "(no file of that exact name was handed in)"),
    (f"hw/{NB01}-Copy1.ipynb", "(not in an attention/ folder)"),
])
def test_the_only_copy_is_graded_wherever_it_is(tmp_path, relative, note):
    folder = student(tmp_path, {relative: SOLVED})
    found, _ = located(folder)
    assert found.path == folder / relative and found.shown == relative
    assert found.notes == (f"graded {relative} as {NB01}.ipynb {note}",)


def test_the_exact_name_in_attention_needs_no_note(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED, f"old/{NB01}.ipynb": other_work()})
    found, submission = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb" and found.notes == ()  # attention/ comes first
    assert submission.unused == (f"old/{NB01}.ipynb",)


@pytest.mark.parametrize("copy", [f"{NB01}-Copy1.ipynb", f"{NB01} (1).ipynb", f"{NB01} - Copy.ipynb"])
def test_the_edited_copy_beside_the_untouched_original_is_graded(tmp_path, copy):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": RELEASED, f"attention/{copy}": SOLVED})
    found, _ = located(folder)
    assert found.path == folder / "attention" / copy
    assert found.notes == (f"graded attention/{copy} as {NB01}.ipynb, the only edited work of 2 copies "
                           f"(attention/{NB01}.ipynb: the release, untouched)",)


def test_copies_of_the_same_work_count_once_and_the_exact_name_is_graded(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED, f"attention/{NB01} (1).ipynb": SOLVED,
                                f"attention/{NB01}-Copy1.ipynb": RELEASED})
    found, _ = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb"
    assert f"attention/{NB01} (1).ipynb: the same code" in found.notes[0]
    assert f"attention/{NB01}-Copy1.ipynb: the release, untouched" in found.notes[0]


def test_two_edited_copies_grade_none_and_the_reason_names_every_candidate(tmp_path):
    names = [f"attention/{NB01}.ipynb", f"attention/{NB01}-Copy1.ipynb", f"attention/{NB01} (1).ipynb"]
    folder = student(tmp_path, {names[0]: SOLVED, names[1]: other_work(), names[2]: RELEASED})
    found, _ = located(folder)
    assert found.path is None and found.candidates == tuple(sorted(names))
    assert found.reason.startswith(f"not submitted: 3 files could be {NB01}.ipynb and they hold different work")
    assert all(name in found.reason for name in names), found.reason


def test_a_missing_notebook_names_the_notebooks_that_were_there(tmp_path):
    folder = student(tmp_path, {"attention/my_notes.ipynb": scratch_notebook(), "attention/README.md": b"hi"})
    found, submission = located(folder)
    assert found.reason == f"not submitted (no attention/{NB01}.ipynb; the notebooks handed in are " \
                           "attention/my_notes.ipynb)"
    assert submission.unused == ("attention/my_notes.ipynb",)
    assert submission.files == ("attention/README.md", "attention/my_notes.ipynb")


# --- notebooks recognised by their content, whatever they are called --------------------------------------

def scratch_notebook():
    """A student's own notebook that pasted NB01's imports and one given cell: no notebook of the assignment."""
    released = json.loads(RELEASED.read_text(encoding="utf-8"))["cells"]
    given = [cell for cell in released if cell["cell_type"] == "code"][:2]
    cells = [*given, {"cell_type": "code", "metadata": {}, "source": "print('trying things out')", "outputs": [],
                      "execution_count": None}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def without_nbgrader_metadata(path):
    """The notebook as a tool that drops cell metadata saves it (jupytext round trips, some Kaggle exports)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for cell in document["cells"]:
        cell["metadata"] = {}
    return json.dumps(document).encode()


def as_colab_saves(path):
    """The notebook as Colab saves it: one source string per cell, Colab's own metadata, outputs kept."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"] = {"colab": {"provenance": []}, "kernelspec": {"name": "python3"}}
    for cell in document["cells"]:
        cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["metadata"]["id"] = "x" + str(abs(hash(cell["source"])) % 10**6)
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "tensor(1.)\n"}]
    return json.dumps(document, indent=2).encode()


@pytest.mark.parametrize("relative", [
    f"attention/Copy of {NB01}.ipynb",  # Colab's "Save a copy in Drive", downloaded
    f"wang_LATE_48213_{NB01}.ipynb",  # an LMS bulk download: surname, lateness, submission id
    "attention/notebook1.ipynb",
    f"Downloads/{NB01.replace('_', ' ').title()} - Kaggle.ipynb",
    "hw2/submission_348812_attempt_2026-11-20-23-59-01.ipynb",
])
def test_a_notebook_of_any_name_that_carries_the_notebooks_cells_is_graded_and_the_note_says_so(tmp_path, relative):
    folder = student(tmp_path, {relative: as_colab_saves(SOLVED), "attention/README.md": b"my work"})
    found, submission = located(folder)
    assert found.path == folder / relative and found.shown == relative and found.by_content
    assert found.notes == (f"graded {relative} as {NB01}.ipynb: its name is not {NB01}.ipynb but it holds that "
                           f"notebook's cells (found by content)",)
    assert relative not in submission.unused
    assert all(submission.located[other].path is None for other in NOTEBOOKS[1:])


def test_a_notebook_without_its_nbgrader_metadata_is_recognised_by_its_given_cells(tmp_path):
    folder = student(tmp_path, {"attention/lab.ipynb": without_nbgrader_metadata(SOLVED)})
    found, _ = located(folder)
    assert found.path == folder / "attention" / "lab.ipynb" and found.by_content


def test_every_notebook_of_the_class_is_recognised_under_lms_names(tmp_path):
    files = {f"smith_{number}_{n}.ipynb": REPO / "source" / "attention" / f"{notebook}.ipynb"
             for number, (n, notebook) in enumerate(zip("ABCD", NOTEBOOKS, strict=True))}
    folder = student(tmp_path, files)
    with open_submission(folder) as submission:
        for (name, _), notebook in zip(files.items(), NOTEBOOKS, strict=True):
            assert submission.located[notebook].shown == name, submission.located[notebook]


def test_a_scratch_notebook_with_a_few_pasted_cells_is_no_notebook_of_the_assignment(tmp_path):
    folder = student(tmp_path, {"attention/scratch.ipynb": scratch_notebook()})
    found, _ = located(folder)
    assert found.path is None and "the notebooks handed in are attention/scratch.ipynb" in found.reason


def test_the_other_notebooks_of_the_assignment_are_not_taken_for_this_one(tmp_path):
    nb02 = REPO / "source" / "attention" / f"{NOTEBOOKS[1]}.ipynb"
    folder = student(tmp_path, {"attention/week2.ipynb": nb02})
    found, submission = located(folder)
    assert found.path is None
    assert submission.located[NOTEBOOKS[1]].shown == "attention/week2.ipynb"


def test_several_files_with_the_notebooks_cells_and_different_work_grade_none_and_name_them_all(tmp_path):
    names = [f"Copy of {NB01}.ipynb", f"lee_48213_{NB01}.ipynb"]
    folder = student(tmp_path, {names[0]: SOLVED, names[1]: other_work()})
    found, _ = located(folder)
    assert found.path is None and found.candidates == tuple(names)
    assert found.reason.startswith(f"not submitted: 2 files could be {NB01}.ipynb and they hold different work")


def test_copies_with_the_same_work_found_by_content_count_once(tmp_path):
    names = [f"Copy of {NB01}.ipynb", f"Copy of {NB01} (1).ipynb", "untitled.ipynb"]
    folder = student(tmp_path, {names[0]: SOLVED, names[1]: SOLVED, names[2]: RELEASED})
    found, _ = located(folder)
    assert found.path == folder / names[1] and found.by_content  # the same code: the first by name
    assert found.notes[0] == (f"graded {names[1]} as {NB01}.ipynb (recognised by its cells: found by content), the "
                              f"only edited work of 3 copies ({names[0]}: the same code; {names[2]}: the release, "
                              "untouched)")


def test_edited_work_of_another_name_wins_over_the_untouched_release_of_the_right_name(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": RELEASED, f"attention/Copy of {NB01}.ipynb": SOLVED})
    found, _ = located(folder)
    assert found.path == folder / "attention" / f"Copy of {NB01}.ipynb" and found.by_content
    assert f"attention/{NB01}.ipynb: the release, untouched" in found.notes[0]


def test_a_file_of_the_right_name_wins_over_one_found_by_content(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED, f"attention/Copy of {NB01}.ipynb": other_work()})
    found, submission = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb" and not found.by_content and found.notes == ()
    assert submission.unused == (f"attention/Copy of {NB01}.ipynb",)


def test_a_notebook_of_another_name_inside_a_zip_is_found_by_content(tmp_path):
    folder = student(tmp_path, {"readme.txt": b"hi"})
    write_zip(folder / "Archive.zip", [(f"Copy of {NB01}.ipynb", SOLVED.read_bytes()),
                                       ("__MACOSX/._Copy of x.ipynb", b"\0\5\x16\x07")])
    with open_submission(folder) as submission:
        found = submission.located[NB01]
        assert found.shown == f"Archive.zip: Copy of {NB01}.ipynb" and found.by_content
        assert found.path.read_bytes() == SOLVED.read_bytes()


def test_a_cluttered_folder_of_many_notebooks_reads_a_bounded_number(tmp_path, monkeypatch):
    reads = []
    markers = intake._file_markers
    monkeypatch.setattr(intake, "_file_markers", lambda path, **kw: reads.append(path) or markers(path, **kw))
    files: dict = {f"runs/run_{index:03}.ipynb": scratch_notebook() for index in range(intake.MAX_CONTENT_READS + 10)}
    files["zzz/Copy of notes.ipynb"] = SOLVED  # read last: past the cap
    folder = student(tmp_path, files)
    found, submission = located(folder)
    assert len([path for path in reads if "release" not in path.parts]) == intake.MAX_CONTENT_READS
    assert found.path is None
    assert "11 more notebook files of other names were not looked into" in submission.notes


# --- zip files ---------------------------------------------------------------------------------------------

def write_zip(path, members):
    """members: [(name or zipfile.ZipInfo, bytes)]."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members:
            archive.writestr(member, data)


def test_a_notebook_only_inside_a_zip_is_extracted_graded_and_cleaned_up(tmp_path):
    folder = student(tmp_path, {"notes.txt": b"hi"})
    write_zip(folder / "attention.zip", [(f"attention/{NB01}.ipynb", SOLVED.read_bytes()), ("attention/x.py", b"")])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with open_submission(folder, scratch_parent=scratch) as submission:
        found = submission.located[NB01]
        assert found.path.read_bytes() == SOLVED.read_bytes() and scratch in found.path.parents
        assert found.notes == (f"graded attention.zip: attention/{NB01}.ipynb as {NB01}.ipynb: found only inside "
                               "the zip file",)
        assert len(list(found.path.parent.iterdir())) == 1  # the notebooks only, nothing else extracted
    assert list(scratch.iterdir()) == []


def test_a_notebook_outside_the_zip_wins_over_the_zip(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED})
    write_zip(folder / "backup.zip", [(f"{NB01}.ipynb", other_work())])
    found, submission = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb" and submission.scratch is None


def test_zip_members_outside_the_folder_or_links_are_not_extracted(tmp_path):
    folder = student(tmp_path, {})
    link = zipfile.ZipInfo(f"attention/{NB01}.ipynb")
    link.external_attr = (0o120777 << 16)  # S_IFLNK: the member is a symbolic link to the solution
    write_zip(folder / "work.zip", [(f"../{NB01}.ipynb", other_work()), (f"/tmp/{NB01}.ipynb", other_work()),
                                    (f"a/../../{NB01} (1).ipynb", other_work()), (link, str(SOLVED).encode())])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with open_submission(folder, scratch_parent=scratch) as submission:
        assert submission.located[NB01].path is None
        reason = submission.located[NB01].reason
        assert f"work.zip: ../{NB01}.ipynb is outside the zip's folder (an absolute or .. path): not extracted" \
            in reason
        assert f"work.zip: /tmp/{NB01}.ipynb is outside the zip's folder" in reason
        assert f"work.zip: a/../../{NB01} (1).ipynb is outside the zip's folder" in reason
        assert f"work.zip: attention/{NB01}.ipynb is a symbolic link: not followed" in reason
        assert [path for path in scratch.rglob("*") if path.is_file()] == []
    assert not (tmp_path / "submitted" / f"{NB01}.ipynb").exists() and not Path(f"/tmp/{NB01}.ipynb").exists()


def test_a_zip_bomb_is_refused_from_its_headers(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_FILE_BYTES", 2**20)  # the same check as 512 MB, with a small test file
    folder = student(tmp_path, {})
    write_zip(folder / "work.zip", [(f"{NB01}.ipynb", b" " * (8 * 2**20))])
    assert (folder / "work.zip").stat().st_size < 100_000
    found, _ = located(folder)
    assert found.path is None and f"work.zip: {NB01}.ipynb is larger than 1 MB: not extracted" in found.reason


def test_a_zip_bomb_that_lies_in_its_headers_stops_while_extracting(tmp_path):
    """The headers say 100 bytes; 8 MB come out: extraction stops at the size the header declared."""
    folder = student(tmp_path, {})
    path = folder / "work.zip"
    write_zip(path, [(f"{NB01}.ipynb", b" " * (8 * 2**20))])
    data = bytearray(path.read_bytes())
    real = (8 * 2**20).to_bytes(4, "little")
    assert data.count(real) == 2  # the local header and the central directory: both lie from now on
    path.write_bytes(bytes(data).replace(real, (100).to_bytes(4, "little")))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    written = []
    copy_member = intake._copy_member

    def watched(archive, info, target, extracted):
        try:
            copy_member(archive, info, target, extracted)
        finally:
            written.append(extracted[0])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intake, "_copy_member", watched)
        with open_submission(folder, scratch_parent=scratch) as submission:
            found = submission.located[NB01]
    assert found.path is None and "work.zip cannot be read as a zip file: Bad CRC-32" in found.reason, found.reason
    assert written and max(written) <= 100


def test_a_zip_with_too_many_members_is_refused_before_extracting(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_ZIP_MEMBERS", 10)
    folder = student(tmp_path, {})
    write_zip(folder / "work.zip", [(f"{NB01}.ipynb", SOLVED.read_bytes())] + [(f"f{i}", b"") for i in range(10)])
    found, _ = located(folder)
    assert found.path is None and "work.zip not extracted: more than 10 members" in found.reason


def test_a_zip_that_is_a_link_is_not_opened(tmp_path):
    outside = tmp_path / "outside.zip"
    write_zip(outside, [(f"{NB01}.ipynb", SOLVED.read_bytes())])
    folder = student(tmp_path, {})
    (folder / "work.zip").symlink_to(outside)
    found, submission = located(folder)
    assert found.path is None and "work.zip is a symbolic link: not followed" in found.reason
    assert submission.scratch is None


def test_work_saved_outside_an_untouched_attention_folder_is_graded(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": RELEASED, f"{NB01}.ipynb": SOLVED})
    found, _ = located(folder)
    assert found.path == folder / f"{NB01}.ipynb"
    assert found.notes == (f"graded {NB01}.ipynb as {NB01}.ipynb, the only edited work of 2 copies "
                           f"(attention/{NB01}.ipynb: the release, untouched)",)


def test_an_edited_notebook_in_attention_wins_over_other_work_near_by(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED, f"{NB01}.ipynb": other_work()})
    found, _ = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb" and found.notes == ()


def test_a_folder_of_many_links_gives_a_few_notes_and_a_count(tmp_path):
    folder = student(tmp_path, {f"attention/{NB01}.ipynb": SOLVED})
    for number in range(500):
        (folder / f"link{number:03}").symlink_to("/etc/passwd")
    found, submission = located(folder)
    assert found.path == folder / "attention" / f"{NB01}.ipynb"
    assert len(submission.notes) == intake.MAX_NOTES + 1 and len(found.notes) == intake.MAX_NOTES + 1
    assert submission.notes[0] == "link000 is a symbolic link: not followed"
    assert submission.notes[-1] == (f"and {500 - intake.MAX_NOTES} more like these (links not followed, zip members "
                                    "not extracted)")
