"""nbgrader's path grades what the student handed in, never what a link points to, and grading ahead is exact.

- autograder/integrations/nbgrader_intake.py: links, hard links to files outside the submission and special files
  in a submitted folder are refused with notes naming them (attnkit grade's words); what nbgrader's copy brought into
  autograded/ through them is removed before any grading, even where the folder changed after nbgrader's copy.
- autograder/integrations/nbgrader_lookahead.py: ahead and on the spot, a notebook is graded beside the same staged
  folder (the student's files after nbgrader's ignore rules, every notebook as handed in), whatever autograded/ holds;
  the grading input is identified by content, notebooks included; a folder too large to digest never matches; the
  look-ahead lives for one call.
- Through `nbgrader autograde` for real (marked slow): the issue's attacks (links to source/, release/, the gradebook,
  a classmate's submission and /etc, as files, folders and notebooks, and hard links) get the grade of the same work
  without them; a resubmitted helper file of the same name and size is graded afresh on formgrader's second click;
  answers hidden in feedback/ beside 2,000 files are not graded ahead; notebooks that run or read each other get
  `attnkit grade`'s totals, graded ahead and on the spot; a malformed notebook stops no classmate.
"""

import fnmatch
import json
import os
import shutil
import socket
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest
from fresh_interpreter import fresh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbgrader.converters.base import BaseConverter
from nbgrader.coursedir import CourseDirectory
from nbgrader.utils import find_all_files
from traitlets.config.loader import PyFileConfigLoader

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.intake import open_submission
from autograder.integrations import nbgrader_course, nbgrader_intake, nbgrader_lookahead, nbgrader_renamed
from autograder.integrations.nbgrader_intake import handed_in, ignored, place_own_files
from autograder.integrations.nbgrader_lookahead import GradingInput, grading_digest

NB01, NB02, NB03, NB04 = NOTEBOOKS[:4]
IGNORE = list(CourseDirectory().ignore)  # nbgrader's: .ipynb_checkpoints, *.pyc, __pycache__, feedback


def _student(tmp_path, name="mallory"):
    folder = tmp_path / "submitted" / name / "attention"
    folder.mkdir(parents=True)
    return folder


def nbgrader_copy(submitted_root, student, autograded_root, ignore=IGNORE):
    """nbgrader's own copy of a submission into autograded/ (BaseConverter.init_assignment, run as nbgrader runs it)."""
    fake = types.SimpleNamespace(
        _format_source=lambda assignment, who: str(submitted_root / who / assignment),
        _format_dest=lambda assignment, who: str(autograded_root / who / assignment),
        coursedir=types.SimpleNamespace(ignore=list(ignore)), log=types.SimpleNamespace(info=lambda *args: None))
    BaseConverter.init_assignment(fake, "attention", student)
    return autograded_root / student / "attention"


# --- the refusals -----------------------------------------------------------------------------------------------


def test_links_hard_links_and_special_files_are_refused_with_notes_naming_them(tmp_path):
    secret = tmp_path / "course" / "source" / "attention" / f"{NB03}.ipynb"
    secret.parent.mkdir(parents=True)
    secret.write_text('{"cells": []}')
    folder = _student(tmp_path)
    (folder / f"{NB01}.ipynb").write_text('{"cells": []}')
    (folder / "answers.txt").symlink_to(secret)
    (folder / "release").symlink_to(tmp_path / "course" / "source", target_is_directory=True)
    (folder / "sub").mkdir()
    (folder / "sub" / "passwd").symlink_to("/etc/passwd")
    (folder / "sub" / "own.txt").write_text("mine")
    (folder / f"{NB03}.ipynb").symlink_to(secret)  # named like a notebook
    os.link(secret, folder / "hard.txt")  # a hard link to the instructor's file
    (folder / "a.txt").write_text("pair")
    os.link(folder / "a.txt", folder / "b.txt")  # two names, both the student's
    os.mkfifo(folder / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "sock"))
    (folder / "feedback").mkdir()
    (folder / "feedback" / "x.txt").symlink_to(secret)  # nbgrader never copies feedback/: nothing to say
    try:
        submission = handed_in(tmp_path / "submitted", ("mallory", "attention"), IGNORE)
    finally:
        listener.close()
    assert sorted(file.relative for file in submission.files) == ["a.txt", "b.txt", "sub/own.txt"]
    assert submission.notebooks == (f"{NB01}.ipynb",)
    assert sorted(submission.notes) == sorted([
        "answers.txt is a symbolic link: not followed",
        "release is a symbolic link: not followed",
        "sub/passwd is a symbolic link: not followed",
        f"{NB03}.ipynb is a symbolic link: not followed",
        "hard.txt is a hard link to a file outside the submission: not copied",
        "pipe is not a regular file (a FIFO): not copied",
        "sock is not a regular file (a socket): not copied",
    ])
    # attnkit grade's words for the same links (autograder.grading.intake), word for word
    with open_submission(folder.parent) as theirs:
        links = {note.removeprefix("attention/") for note in theirs.notes if "symbolic link" in note}
    assert links - {"feedback/x.txt is a symbolic link: not followed"} == {
        note for note in submission.notes if "symbolic link" in note}


@pytest.mark.parametrize("linked", ["student", "assignment"])
def test_a_student_folder_or_assignment_folder_that_is_a_link_hands_in_nothing(tmp_path, linked):
    bob = _student(tmp_path, "bob")
    (bob / f"{NB01}.ipynb").write_text('{"cells": []}')
    (bob / "helper.py").write_text("x = 1")
    if linked == "student":
        (tmp_path / "submitted" / "mallory").symlink_to(tmp_path / "submitted" / "bob")
        expected = "mallory/ is a symbolic link: not followed"
    else:
        (tmp_path / "submitted" / "mallory").mkdir()
        (tmp_path / "submitted" / "mallory" / "attention").symlink_to(bob)
        expected = "attention/ is a symbolic link: not followed"
    submission = handed_in(tmp_path / "submitted", ("mallory", "attention"), IGNORE)
    assert (submission.files, submission.notebooks, submission.notes) == ((), (), (expected,))


def test_what_nbgrader_copied_through_a_link_is_removed_before_grading(tmp_path):
    secret = tmp_path / "solutions.txt"
    secret.write_text("THE SOLUTIONS")
    folder = _student(tmp_path)
    (folder / "answers.txt").symlink_to(secret)
    (folder / "data").mkdir()
    (folder / "data" / "deep.txt").symlink_to(secret)
    os.link(secret, folder / "hard.txt")
    (folder / "helper.py").write_text("x = 1")
    autograded = nbgrader_copy(tmp_path / "submitted", "mallory", tmp_path / "autograded")
    assert (autograded / "answers.txt").read_text() == "THE SOLUTIONS"  # nbgrader's copy followed the link
    assert (autograded / "hard.txt").read_text() == "THE SOLUTIONS"
    (autograded / f"{NB01}.ipynb").write_text("nbgrader's own output")
    submission = handed_in(tmp_path / "submitted", ("mallory", "attention"), IGNORE)
    place_own_files(submission, tmp_path / "submitted", ("mallory", "attention"), autograded)
    left = {path.relative_to(autograded).as_posix(): path.read_text() for path in autograded.rglob("*")
            if path.is_file()}
    assert left == {"helper.py": "x = 1", f"{NB01}.ipynb": "nbgrader's own output"}


def test_a_link_swapped_in_after_nbgraders_copy_or_out_of_it_never_brings_its_target(tmp_path):
    secret = tmp_path / "solutions.txt"
    secret.write_text("THE SOLUTIONS")
    folder = _student(tmp_path)
    (folder / "was_link.txt").symlink_to(secret)
    (folder / "becomes_link.txt").write_text("honest")
    autograded = nbgrader_copy(tmp_path / "submitted", "mallory", tmp_path / "autograded")
    # between nbgrader's copy and attnkit's step: the link is replaced by a file, the file by a link
    (folder / "was_link.txt").unlink()
    (folder / "was_link.txt").write_text("own words")
    (folder / "becomes_link.txt").unlink()
    (folder / "becomes_link.txt").symlink_to(secret)
    submission = handed_in(tmp_path / "submitted", ("mallory", "attention"), IGNORE)
    place_own_files(submission, tmp_path / "submitted", ("mallory", "attention"), autograded)
    assert {path.name: path.read_text() for path in autograded.iterdir()} == {"was_link.txt": "own words"}
    # and a link swapped in between attnkit's scan and its copy is not copied either
    (folder / "was_link.txt").unlink()
    (folder / "was_link.txt").symlink_to(secret)
    notes = place_own_files(submission, tmp_path / "submitted", ("mallory", "attention"), autograded)
    assert notes == ["was_link.txt changed while it was copied: not copied"]
    assert list(autograded.iterdir()) == []


def test_the_sanitize_list_is_nbgraders_with_attnkits_steps_first_and_before_overwrite_cells(repo_root):
    from nbgrader.converters.autograde import Autograde

    from autograder.integrations import nbgrader_hidden_tests, nbgrader_metadata, nbgrader_points, nbgrader_sandbox

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert list(config.Autograde.sanitize_preprocessors) == nbgrader_intake.SANITIZE_PREPROCESSORS
    defaults = [f"nbgrader.preprocessors.{kind.__name__}" for kind in Autograde().sanitize_preprocessors]
    overwrite = defaults.index(nbgrader_hidden_tests.OVERWRITE_CELLS)
    assert nbgrader_intake.SANITIZE_PREPROCESSORS == nbgrader_sandbox.in_place_of_nbgraders([
        nbgrader_intake.THIS, *defaults[:overwrite], nbgrader_hidden_tests.THIS, nbgrader_points.THIS,
        *defaults[overwrite:]])
    assert nbgrader_metadata.THIS in nbgrader_intake.SANITIZE_PREPROCESSORS


# --- the same ignore rules and the same digest on both sides ------------------------------------------------------

NAMES = st.sampled_from(["a.py", "b.csv", "x.pyc", ".hidden", ".hidden.pyc", "feedback", "__pycache__",
                         ".ipynb_checkpoints", "sub", "n.ipynb", "timestamp.txt", "Feedback"])
TREES = st.recursive(st.binary(max_size=8), lambda children: st.dictionaries(NAMES, children, max_size=4),
                     max_leaves=12).filter(lambda tree: isinstance(tree, dict))


def _write_tree(folder, tree):
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in tree.items():
        if isinstance(content, dict):
            _write_tree(folder / name, content)
        else:
            (folder / name).write_bytes(content)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=TREES)
def test_what_attnkit_takes_as_handed_in_is_what_nbgraders_copy_copies(tmp_path_factory, tree):
    root = tmp_path_factory.mktemp("ignore")
    folder = root / "submitted" / "s" / "attention"
    _write_tree(folder, tree)
    theirs = {Path(path).relative_to(folder).as_posix() for path in find_all_files(str(folder), [*IGNORE, "*.ipynb"])}
    ours = {file.relative for file in handed_in(root / "submitted", ("s", "attention"), IGNORE).files}
    assert ours == theirs
    assert all(ignored(name, IGNORE) == (name in ("x.pyc", "feedback", "__pycache__", ".ipynb_checkpoints"))
               for name in ("x.pyc", ".hidden.pyc", "feedback", "Feedback", "__pycache__", ".ipynb_checkpoints"))


def _take_notebooks_out(staged, folder):
    """Take out of the `staged` folder what staging adds to nbgrader's copy of `folder`: every notebook handed in
    (checked to be as handed in, in subfolders too), and each folder made only to hold them (`sub/` for
    `sub/notes.ipynb`: nbgrader's copy, which copies no notebook, never makes it). A folder left empty otherwise stays
    (nbgrader's copy makes none: staging must not either)."""
    for notebook in sorted(staged.rglob("*.ipynb")):
        assert notebook.read_bytes() == (folder / notebook.relative_to(staged)).read_bytes()
        notebook.unlink()
        holder = notebook.parent
        while holder != staged and not any(holder.iterdir()):
            holder.rmdir()
            holder = holder.parent


def test_a_subfolder_holding_only_notebooks_is_staged_with_them_and_digests_as_nbgraders_copy_without_them(tmp_path):
    """The failing case the Hypothesis test below found (a folder named like a .py file, the first name it tries,
    holding a compiled file nbgrader ignores and a notebook): staging places the notebook, in its folder, beside the
    graded one; ahead and on the spot the folder digests alike; taken out, it leaves what nbgrader's copy leaves."""
    folder = _student(tmp_path, "s")
    _write_tree(folder, {"a.py": {"x.pyc": b"", "n.ipynb": b"{}"}, "deep": {"er": {"notes.ipynb": b"[]"}},
                         "kept": {"data.csv": b"1", "k.ipynb": b"{}"}, f"{NB01}.ipynb": b'{"cells": []}'})
    run = nbgrader_lookahead.Run(tmp_path / "submitted", tmp_path / "autograded", "attention", "*", True, (NB01,),
                                 None, tuple(IGNORE))  # type: ignore[arg-type]
    staged = tmp_path / "staged"
    assert nbgrader_lookahead.stage(run, "s", [NB01], staged) == [NB01]
    assert set(_files(staged)) == {"a.py/n.ipynb", "deep/er/notes.ipynb", "kept/data.csv", "kept/k.ipynb",
                                   f"{NB01}.ipynb"}
    with nbgrader_lookahead.staged(run, "s") as on_the_spot:
        assert grading_digest(on_the_spot) == grading_digest(staged) is not None
    autograded = nbgrader_copy(tmp_path / "submitted", "s", tmp_path / "autograded")
    place_own_files(handed_in(tmp_path / "submitted", ("s", "attention"), IGNORE), tmp_path / "submitted",
                    ("s", "attention"), autograded)
    assert grading_digest(staged) != grading_digest(autograded)
    _take_notebooks_out(staged, folder)
    assert sorted(path.relative_to(staged).as_posix() for path in staged.rglob("*")) == ["kept", "kept/data.csv"]
    assert grading_digest(staged) == grading_digest(autograded) is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=TREES, linked=st.booleans(), resubmitted=st.data())
def test_the_staged_input_and_nbgraders_copy_have_one_digest_and_a_resubmission_another(tmp_path_factory, tree,
                                                                                         linked, resubmitted):
    """For random submissions (ignored files, hidden files, links): the folder grading stages (but for the notebooks,
    which nbgrader converts or leaves out instead of copying, staged as handed in) and the folder nbgrader's copy
    leaves (after attnkit's step, which places no notebook) digest the same; a resubmitted file of the same name and
    size, but other bytes, digests differently."""
    root = tmp_path_factory.mktemp("digest")
    folder = root / "submitted" / "s" / "attention"
    _write_tree(folder, tree)
    (folder / f"{NB01}.ipynb").write_text('{"cells": []}')
    (root / "secret.txt").write_text("SECRET")
    if linked:
        (folder / "link.txt").symlink_to(root / "secret.txt")
    run = nbgrader_lookahead.Run(root / "submitted", root / "autograded", "attention", "*", True, (NB01,),
                                 None, tuple(IGNORE))  # type: ignore[arg-type]
    staged = root / "staged"
    assert nbgrader_lookahead.stage(run, "s", [NB01], staged) == [NB01]
    _take_notebooks_out(staged, folder)
    autograded = nbgrader_copy(root / "submitted", "s", root / "autograded")
    place_own_files(handed_in(root / "submitted", ("s", "attention"), IGNORE), root / "submitted", ("s", "attention"),
                    autograded)
    assert grading_digest(staged) == grading_digest(autograded) is not None
    assert "SECRET" not in "".join(path.read_text(errors="replace") for path in autograded.rglob("*")
                                   if path.is_file())
    copied = sorted(path for path in autograded.rglob("*") if path.is_file() and path.stat().st_size)
    if copied:
        chosen = resubmitted.draw(st.sampled_from(copied))
        original = chosen.read_bytes()
        (folder / chosen.relative_to(autograded)).write_bytes(bytes(byte ^ 1 for byte in original))
        shutil.rmtree(root / "autograded")
        again = nbgrader_copy(root / "submitted", "s", root / "autograded")
        assert grading_digest(again) != grading_digest(staged)


def test_the_students_other_notebooks_are_staged_and_digested_but_never_placed_in_autograded(tmp_path):
    """`Untitled.ipynb`, a `-Copy1` beside the notebook, `00_setup.ipynb` (which the code `%run`s) and a notebook in a
    subfolder: nbgrader's copy leaves every notebook out, and so does attnkit's placing in `autograded/` (where
    nbgrader's generate_feedback would take each for a submitted notebook); the folder both modes grade beside
    (`stage`) holds each as handed in, so the grading digest covers them in both modes, and a resubmitted setup
    notebook digests differently."""
    source = tmp_path / "source" / "attention"
    source.mkdir(parents=True)
    (source / f"{NB01}.ipynb").write_text('{"cells": []}')
    folder = tmp_path / "submitted" / "s" / "attention"
    (folder / "sub").mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text('{"cells": [], "as": "handed in"}')
    for name in ("00_setup.ipynb", "Untitled.ipynb", f"{NB01}-Copy1.ipynb", "sub/scratch.ipynb"):
        (folder / name).write_text('{"cells": [], "helpers": 1}')
    (folder / "helper.py").write_text("x = 1")
    graded = nbgrader_intake.assignment_notebooks(source)
    assert graded == {f"{NB01}.ipynb"}
    submission = handed_in(tmp_path / "submitted", ("s", "attention"), IGNORE, graded)
    assert submission.notebooks == (f"{NB01}.ipynb",)
    assert [file.relative for file in submission.files] == ["helper.py"]
    run = nbgrader_lookahead.Run(tmp_path / "submitted", tmp_path / "autograded", "attention", "*", True, (NB01,),
                                 None, tuple(IGNORE), source)  # type: ignore[arg-type]
    staged = tmp_path / "staged"
    assert nbgrader_lookahead.stage(run, "s", [NB01], staged) == [NB01]
    autograded = nbgrader_copy(tmp_path / "submitted", "s", tmp_path / "autograded")
    (autograded / f"{NB01}.ipynb").write_text('{"cells": [], "as": "sanitized by nbgrader"}')
    place_own_files(submission, tmp_path / "submitted", ("s", "attention"), autograded)
    assert sorted(path.relative_to(autograded).as_posix() for path in autograded.rglob("*") if path.is_file()) == \
        [f"{NB01}.ipynb", "helper.py"]
    beside = {"00_setup.ipynb", "Untitled.ipynb", f"{NB01}-Copy1.ipynb", "sub/scratch.ipynb"}
    assert {file.relative for file in submission.notebooks_beside} == beside
    chosen = nbgrader_intake.graded_file(tmp_path / "submitted", ("s", "attention"), NB01, submission).data
    assert _files(staged) == {**{name: b'{"cells": [], "helpers": 1}' for name in beside}, "helper.py": b"x = 1",
                              f"{NB01}.ipynb": chosen}
    with nbgrader_lookahead.staged(run, "s") as on_the_spot:
        assert grading_digest(on_the_spot) == grading_digest(staged) is not None
    (folder / "00_setup.ipynb").write_text('{"cells": [], "helpers": 2}')  # resubmitted in between
    with nbgrader_lookahead.staged(run, "s") as on_the_spot:
        assert grading_digest(on_the_spot) != grading_digest(staged)


def _files(folder):
    """{relative path: content} of every regular file under `folder`."""
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*")
            if path.is_file() and not path.is_symlink()}


HANDED_IN_NOTEBOOKS = st.dictionaries(st.sampled_from([NB01, NB02, NB03, "00_setup", "more/notes"]),
                                      st.tuples(st.binary(min_size=1, max_size=8), st.booleans()), min_size=1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=TREES, notebooks=HANDED_IN_NOTEBOOKS, stale=st.booleans(), resubmitted=st.data())
def test_ahead_and_on_the_spot_a_notebook_is_graded_beside_the_same_files_notebooks_included(
        tmp_path_factory, tree, notebooks, stale, resubmitted):
    """For random submissions of notebooks (some handed in as links: {name: (bytes, linked)}) among other files: at
    each notebook's turn in nbgrader's autograde, whatever `autograded/` then holds (nbgrader's graded notebooks
    before it, its sanitized one, none after; `stale`: those of an earlier run), the folder it is graded beside on the
    spot holds the same files with the same content as the folder graded ahead, every notebook the student handed in
    among them, as handed in; any of them handed in again (the same name and size, other bytes) digests
    differently."""
    root = tmp_path_factory.mktemp("beside")
    source = root / "source" / "attention"
    _write_tree(source, {f"{name}.ipynb": b'{"cells": []}' for name in NOTEBOOKS})  # the notebooks nbgrader converts
    folder = root / "submitted" / "s" / "attention"
    _write_tree(folder, tree)
    (root / "solutions.ipynb").write_text("SOLUTIONS")
    for name, (content, linked) in notebooks.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if linked:
            (folder / f"{name}.ipynb").symlink_to(root / "solutions.ipynb")
        else:
            (folder / f"{name}.ipynb").write_bytes(content)
    handed = {f"{name}.ipynb": content for name, (content, linked) in notebooks.items() if not linked}
    run = nbgrader_lookahead.Run(root / "submitted", root / "autograded", "attention", "*", True, NOTEBOOKS,
                                 None, tuple(IGNORE), source)  # type: ignore[arg-type]
    ahead = root / "ahead"
    assert nbgrader_lookahead.stage(run, "s", list(NOTEBOOKS), ahead) == [
        name for name in NOTEBOOKS if f"{name}.ipynb" in handed]
    assert {name: content for name, content in _files(ahead).items()
            if name.removesuffix(".ipynb") in notebooks} == handed
    autograded = nbgrader_copy(root / "submitted", "s", root / "autograded")
    autograded.mkdir(parents=True, exist_ok=True)
    converted = sorted(path.name for path in folder.glob("*.ipynb") if path.stem in NOTEBOOKS)  # nbgrader's order
    if stale:
        _write_tree(autograded, {name: b"graded by an earlier run" for name in converted})
    submission = handed_in(root / "submitted", ("s", "attention"), IGNORE, nbgrader_intake.assignment_notebooks(source))
    for name in converted:
        (autograded / name).write_text("sanitized by nbgrader")
        place_own_files(submission, root / "submitted", ("s", "attention"), autograded)  # attnkit's sanitizing step
        with nbgrader_lookahead.staged(run, "s") as on_the_spot:
            assert _files(on_the_spot) == _files(ahead)
            assert grading_digest(on_the_spot) == grading_digest(ahead) is not None
        (autograded / name).write_text("graded by nbgrader")
    staged_files = sorted(name for name, content in _files(ahead).items() if content)
    if staged_files:
        chosen = resubmitted.draw(st.sampled_from(staged_files))
        (folder / chosen).write_bytes(bytes(byte ^ 1 for byte in (folder / chosen).read_bytes()))
        with nbgrader_lookahead.staged(run, "s") as on_the_spot:
            assert grading_digest(on_the_spot) != grading_digest(ahead)


def test_nbgraders_read_of_a_submitted_notebook_is_attnkits_and_a_renamed_one_is_converted_too(tmp_path, repo_root):
    """The course's Autograde exporter reads a submitted notebook as attnkit reads one: a link (to the instructor's
    solved notebook), a FIFO, a sparse 4 GB file and a notebook missing under its own name are read as empty
    notebooks (OwnFilesOnly then grades what `attnkit grade` grades, or says why nothing), never followed, waited on
    or read; nbgrader's own notebooks in autograded/ are read as nbgrader reads them. The pre-convert hook adds to
    nbgrader's list a notebook handed in under another name, and nothing for a folder without a notebook file."""
    from nbgrader.converters.autograde import Autograde

    from autograder.integrations.nbgrader_renamed import RenamedNotebookExporter, also_convert_renamed

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert config.Autograde.pre_convert_hook.endswith(".also_convert_renamed")
    assert config.Autograde.exporter_class.endswith(".RenamedNotebookExporter")
    folder = _student(tmp_path)
    solved = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    (folder / f"{NB01}.ipynb").symlink_to(solved)
    os.mkfifo(folder / f"{NB03}.ipynb")
    with (folder / f"{NB04}.ipynb").open("wb") as sparse:
        sparse.truncate(4 * 2**30)
    (folder / "own.ipynb").write_bytes(solved.read_bytes())
    exporter = RenamedNotebookExporter(parent=Autograde(coursedir=CourseDirectory(root=str(tmp_path))))
    for name in (NB01, NOTEBOOKS[1], NB03, NB04):
        output, resources = exporter.from_filename(str(folder / f"{name}.ipynb"), {})
        assert nbformat.reads(output, as_version=4).cells == [], name
        assert (resources["metadata"]["name"], resources["metadata"]["path"]) == (name, str(folder))
    assert len(nbformat.reads(exporter.from_filename(str(folder / "own.ipynb"), {})[0], as_version=4).cells) > 10
    graded = tmp_path / "autograded" / "mallory" / "attention"
    graded.mkdir(parents=True)
    (graded / f"{NB01}.ipynb").write_bytes(solved.read_bytes())
    assert len(nbformat.reads(exporter.from_filename(str(graded / f"{NB01}.ipynb"), {})[0], as_version=4).cells) > 10

    renamed = tmp_path / "submitted" / "renamed" / "attention"
    renamed.mkdir(parents=True)
    (renamed / f"{NB03}.ipynb").write_bytes((repo_root / "release" / "attention" / f"{NB03}.ipynb").read_bytes())
    (renamed / f"{NB01}-Copy1.ipynb").write_bytes(solved.read_bytes())
    (renamed / "Untitled.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    notebooks = sorted(str(path) for path in renamed.glob("*.ipynb"))
    also_convert_renamed(assignment="attention", student="*", notebooks=notebooks)
    assert notebooks[3:] == [str(renamed / f"{NB01}.ipynb")]
    nothing = tmp_path / "submitted" / "zipped" / "attention"
    nothing.mkdir(parents=True)
    (nothing / f"{NB01}.ipynb.txt").write_bytes(solved.read_bytes())
    assert nbgrader_renamed.notebooks_to_convert(nothing, NOTEBOOKS) == []  # nbgrader skips it: no notebook file


@pytest.mark.parametrize("notebook_id, added", [("*", [NB04]), (NB03, []), (NB01, []), ("0[13]_*", []),
                                                ("0[34]_*", [NB04])])
def test_under_autograde_notebook_the_hook_adds_only_the_notebooks_it_names(tmp_path, repo_root, notebook_id, added):
    """nbgrader calls the pre-convert hook without `--notebook`'s value: the course's exporter, which nbgrader makes
    with the converter as its parent before it calls the hook, narrows the hook to the notebooks `--notebook` names.
    `autograde --notebook 03` gives the hook [03]; neither 01, handed in under its own name, nor 04, only under another
    name, is added (converted, so regraded and rewritten in autograded/); without `--notebook`, 04 is."""
    from nbgrader.converters.autograde import Autograde

    from autograder.integrations.nbgrader_renamed import RenamedNotebookExporter

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    folder = _student(tmp_path)
    solved = repo_root / "source" / "attention"
    for name in (NB01, NB03):
        (folder / f"{name}.ipynb").write_bytes((solved / f"{name}.ipynb").read_bytes())
    (folder / f"{NB04}-Copy1.ipynb").write_bytes((solved / f"{NB04}.ipynb").read_bytes())
    converter = Autograde(coursedir=CourseDirectory(root=str(tmp_path), notebook_id=notebook_id), config=config)
    converter.exporter = RenamedNotebookExporter(parent=converter, config=converter.config)  # as BaseConverter.start
    globbed = sorted(str(path) for path in folder.glob(f"{notebook_id}.ipynb"))  # nbgrader's glob of --notebook
    converter.notebooks = list(globbed)
    converter.run_pre_convert_hook()  # nbgrader's own call of the hook, for this student's folder
    assert converter.notebooks == [*globbed, *(str(folder / f"{name}.ipynb") for name in added)]


@pytest.mark.parametrize("in_kernel", [False, True])
def test_the_exporter_starts_the_zygote_before_the_hook_only_for_a_call_that_grades_in_the_sandbox(
        tmp_path, repo_root, monkeypatch, in_kernel):
    """nbgrader makes the course's exporter before it calls the pre-convert hook, whose imports (torch, the checks)
    take seconds in nbgrader's process: the exporter starts the sandbox's zygote then, so that its own imports overlap
    them, where the call grades in the sandbox; never where the course grades in the kernel."""
    from nbgrader.converters.autograde import Autograde

    from autograder.integrations import nbgrader_sandbox, nbgrader_zygote_start
    from autograder.integrations.nbgrader_renamed import RenamedNotebookExporter

    spawned = []
    monkeypatch.setattr(nbgrader_zygote_start, "shared_zygote", lambda: types.SimpleNamespace(
        spawn=lambda: spawned.append(True)))
    monkeypatch.setattr(nbgrader_zygote_start, "sandbox_problems", lambda: [])
    monkeypatch.setattr(nbgrader_zygote_start, "_quick_teardown_at_exit", lambda: None)  # not in pytest's process
    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    if in_kernel:
        exec("\n".join(nbgrader_sandbox.in_kernel_config_lines()), {"c": config})  # as make_course(in_kernel=True)
    converter = Autograde(coursedir=CourseDirectory(root=str(tmp_path)), config=config)
    assert spawned == []
    converter.exporter = RenamedNotebookExporter(parent=converter, config=converter.config)  # as BaseConverter.start
    assert spawned == ([] if in_kernel else [True])


def test_a_call_that_grades_in_the_sandbox_ends_without_shutdown_scanning_what_it_holds():
    """nbgrader's process holds torch, nbgrader and a class's results when it ends: the interpreter's collections at
    shutdown scanned them all again (1.7 s of a 16 s bench run). Once the exporter starts the zygote, a handler that
    runs after the zygote's close (registered before it: atexit runs the last registered first) collects what is
    garbage, so that its finalizers still run, then freezes the rest. Registered once, however many exporters."""
    words = fresh("""
        import atexit, functools, gc, types
        from autograder.integrations import nbgrader_sandbox, nbgrader_zygote_start

        class Cycle:  # garbage in a cycle: its finalizer runs only if something collects it
            def __del__(self):
                print("finalized", flush=True)

        def report():  # registered first, so it runs last
            print("frozen", gc.get_freeze_count() > 0, "closed", *closed, flush=True)

        closed = []
        before = atexit._ncallbacks()  # what the imports registered
        atexit.register(report)
        nbgrader_zygote_start.sandbox_problems = lambda: []

        @functools.cache
        def zygote():  # as shared_zygote: one, whose close is registered when it is made
            atexit.register(lambda: closed.append("before_freeze" if gc.get_freeze_count() == 0 else "after"))
            return types.SimpleNamespace(spawn=lambda: None)

        nbgrader_zygote_start.shared_zygote = zygote
        converter = types.SimpleNamespace(autograde_preprocessors=[nbgrader_sandbox.SandboxedExecute])
        nbgrader_zygote_start.start_zygote_early(converter)
        nbgrader_zygote_start.start_zygote_early(converter)
        gc.disable()  # only the handler may collect the cycle before the report
        cycle = Cycle()
        cycle.me = cycle
        del cycle
        print("handlers", atexit._ncallbacks() - before, flush=True)
    """)
    assert words == ["handlers", "3", "finalized", "frozen", "True", "closed", "before_freeze"]


@pytest.mark.parametrize("notebook_id", ["*", NB03, "0[34]_*"])
def test_grading_ahead_expects_the_notebooks_nbgrader_converts_under_autograde_notebook(tmp_path, repo_root,
                                                                                       notebook_id):
    """The look-ahead grades (and counts for its progress lines) the notebooks nbgrader's converter converts, its
    glob of `--notebook` and the course's hook included: under `--notebook 03`, a student who handed 03 in only as
    `03_…-Copy1.ipynb` is skipped by nbgrader ("No notebooks were matched"), so not graded ahead either."""
    from nbgrader.converters.autograde import Autograde

    from autograder.integrations.nbgrader_renamed import RenamedNotebookExporter

    solved = repo_root / "source" / "attention"
    handed = {"own": {NB01: NB01, NB03: NB03}, "renamed03": {NB01: NB01, f"{NB03}-Copy1": NB03},
              "renamed04": {NB03: NB03, f"{NB04}-Copy1": NB04}}
    for student, files in handed.items():
        folder = _student(tmp_path, student)
        for name, notebook in files.items():
            (folder / f"{name}.ipynb").write_bytes((solved / f"{notebook}.ipynb").read_bytes())
    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    course = CourseDirectory(root=str(tmp_path), notebook_id=notebook_id, assignment_id="attention", student_id="*")
    converter = Autograde(coursedir=course, config=config)
    converter.init_notebooks()  # nbgrader's glob, as `autograde --notebook` runs it
    converter.exporter = RenamedNotebookExporter(parent=converter, config=converter.config)
    converted = []
    for folder in sorted(converter.assignments):
        converter.notebooks = sorted(converter.assignments[folder])
        converter.run_pre_convert_hook()
        converted += [(Path(folder).parent.name, Path(path).stem) for path in converter.notebooks
                      if Path(path).stem in NOTEBOOKS]
    run = nbgrader_lookahead.Run(tmp_path / "submitted", tmp_path / "autograded", "attention", "*", True,
                                 tuple(fnmatch.filter(NOTEBOOKS, notebook_id)), None, tuple(IGNORE),  # type: ignore[arg-type]
                                 notebook_id=notebook_id)
    ahead = [(found.student, found.notebook) for found in nbgrader_lookahead.about_to_autograde(run)]
    assert sorted(ahead) == sorted(converted)
    assert (("renamed03", NB03) in ahead) == (notebook_id != NB03)  # "0[34]_*" matches 03_…-Copy1.ipynb: converted


def test_a_folder_too_large_to_digest_never_matches(tmp_path, monkeypatch):
    monkeypatch.setattr(nbgrader_lookahead, "MAX_NEIGHBOURS", 3)
    for side in ("ahead", "autograded"):
        for number in range(5):
            (tmp_path / side).mkdir(exist_ok=True)
            (tmp_path / side / f"{number}.txt").write_text("x")
    assert grading_digest(tmp_path / "ahead") is None
    one = GradingInput(NB01, (), (), grading_digest(tmp_path / "ahead"))
    other = GradingInput(NB01, (), (), grading_digest(tmp_path / "autograded"))
    assert one == other and not one.matches(other)  # equal, yet never taken


def test_the_look_ahead_lives_for_one_autograde_call(tmp_path, monkeypatch):
    monkeypatch.setattr(nbgrader_lookahead.LookAhead, "_work", lambda self: None)
    run = nbgrader_lookahead.Run(tmp_path, tmp_path, "attention", "*", True, (NB01,), None)  # type: ignore[arg-type]
    first_call, second_call = types.SimpleNamespace(), types.SimpleNamespace()
    ahead = nbgrader_lookahead.look_ahead(run, first_call)
    assert nbgrader_lookahead.look_ahead(run, first_call) is ahead  # every notebook of the call asks the same one
    assert nbgrader_lookahead.look_ahead(run, second_call) is not ahead  # the next click starts afresh


def test_the_look_ahead_grades_a_student_before_the_class_is_staged_in_chunks_of_its_size(tmp_path, monkeypatch):
    """Grading ahead starts with the first student's notebooks, not after every student is staged and planned, and
    grades CHUNK_PER_WORKER notebooks a worker per grade_notebooks call (each call forks its children ahead and
    computes the class's expectations once): 3 students x 4 notebooks at 1 worker are one chunk of 8, graded before
    the third student is staged, then 4."""
    from autograder.grading.notebooks import Options
    from autograder.isolation.limits import Limits

    events: list[tuple[str, object]] = []
    students = ["s1", "s2", "s3"]
    submitted = [nbgrader_lookahead.Submitted(student, notebook, tmp_path / student / f"{notebook}.ipynb")
                 for student in students for notebook in NOTEBOOKS[:4]]

    def stage(run, student, notebooks, into):
        events.append(("stage", student))
        into.mkdir(parents=True)
        for notebook in notebooks:
            (into / f"{notebook}.ipynb").write_text(student, encoding="utf-8")
        return notebooks

    def plan(path, notebook):
        return types.SimpleNamespace(notebook=notebook, steps=(), exercises=(), notes=[], path=path)

    def grade(jobs, options, on_result):
        events.append(("grade", [job.key for job in jobs]))
        for job in jobs:
            on_result(types.SimpleNamespace(key=job.key, notes=[]))

    monkeypatch.setattr(nbgrader_lookahead, "about_to_autograde", lambda run: submitted)
    monkeypatch.setattr(nbgrader_lookahead, "stage", stage)
    monkeypatch.setattr(nbgrader_lookahead, "plan_notebook", plan)
    monkeypatch.setattr(nbgrader_lookahead, "grade_notebooks", grade)
    monkeypatch.setattr(nbgrader_lookahead, "CHUNK_PER_WORKER", 8)
    run = nbgrader_lookahead.Run(tmp_path, tmp_path, "attention", "*", True, NOTEBOOKS[:4],
                                 Options(limits=Limits(workers=1)))
    ahead = nbgrader_lookahead.LookAhead(run)
    ahead._thread.join(timeout=60)
    assert [kind for kind, _ in events] == ["stage", "stage", "grade", "stage", "grade"]
    chunks = [keys for kind, keys in events if kind == "grade"]
    assert chunks == [[(student, notebook) for student in students[:2] for notebook in NOTEBOOKS[:4]],
                      [("s3", notebook) for notebook in NOTEBOOKS[:4]]]
    assert set(ahead._inputs) == {(item.student, item.notebook) for item in submitted}


# --- through `nbgrader autograde` for real -----------------------------------------------------------------------

SOLUTION = "solution_"


def _course(root, repo_root):
    course = nbgrader_course.make_course(root, repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.SandboxedExecute.timeout = 10\n")
    nbgrader_course.generate_release(course)
    return course


def _notebook(repo_root, kind, name):
    return nbformat.read(repo_root / kind / "attention" / f"{name}.ipynb", as_version=4)


def _solutions(repo_root, name):
    """The source's solution cells of notebook `name`, as one program."""
    return "\n\n".join(cell.source for cell in _notebook(repo_root, "source", name).cells
                       if cell.metadata.get("nbgrader", {}).get("solution"))


def _every_solution_cell(notebook, source):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith(SOLUTION):
            cell.source = source
    return notebook


def _write(folder, name, notebook):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _run_nbgrader(course, *args):
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=environment,
                          capture_output=True, text=True, check=False)


# The attack, generalised: every solution cell executes the solution cells of whichever file it can read
# that holds notebook 03's source, and prints whatever a classmate's notebook holds.
STEAL = '''import json
for _name in ("answers.txt", "hard.txt", "sub/deep.txt", "src/attention/03_causal_attention.ipynb"):
    try:
        _cells = json.load(open(_name))["cells"]
    except Exception:
        continue
    for _cell in _cells:
        if _cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(_cell["source"]), globals())
    break
'''
PEEK = '''for _name in ("bob.txt", "gradebook.db", "passwd", "etc/passwd",
              "release/attention/01_attention_without_weights.ipynb"):
    try:
        print(open(_name, errors="replace").read()[:200000])
    except Exception as error:
        print(_name, type(error).__name__)
'''
MARKER = "BOB-MARKER-31415"


@pytest.mark.slow
def test_links_to_solutions_classmates_the_gradebook_and_etc_earn_nothing_through_nbgrader(tmp_path, repo_root):
    """mallory's notebook 03 reads the solutions through links (to source/, as a hard link, in a subfolder, a
    folder link) and prints a classmate's notebook, the gradebook and /etc/passwd through links; her notebook 04 is a
    link to bob's. She gets what the same notebooks get without the links (0 on 03 and 04), nothing she linked
    reaches autograded/ or her feedback, and the notes name every link."""
    course = _course(tmp_path / "course", repo_root)
    bob_03 = _notebook(repo_root, "source", NB03)
    bob_03.cells[-1].source += f"\n# {MARKER}"
    submitted = course / "submitted"
    for name in NOTEBOOKS:
        _write(submitted / "bob" / "attention", name, bob_03 if name == NB03 else _notebook(repo_root, "source", name))
    attack = _every_solution_cell(_notebook(repo_root, "release", NB03), STEAL)
    attack.cells.insert(0, nbformat.v4.new_code_cell(PEEK))
    for student in ("mallory", "mallory-clean"):
        for name in NOTEBOOKS:
            _write(submitted / student / "attention", name, attack if name == NB03 else _notebook(repo_root, "release",
                                                                                                   name))
    folder = submitted / "mallory" / "attention"
    (folder / f"{NB04}.ipynb").unlink()
    (folder / f"{NB04}.ipynb").symlink_to(submitted / "bob" / "attention" / f"{NB04}.ipynb")
    (folder / "answers.txt").symlink_to(course / "source" / "attention" / f"{NB03}.ipynb")
    os.link(course / "source" / "attention" / f"{NB03}.ipynb", folder / "hard.txt")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.txt").symlink_to(course / "source" / "attention" / f"{NB03}.ipynb")
    (folder / "src").symlink_to(course / "source", target_is_directory=True)
    (folder / "release").symlink_to(course / "release", target_is_directory=True)
    (folder / "bob.txt").symlink_to(submitted / "bob" / "attention" / f"{NB03}.ipynb")
    (folder / "gradebook.db").symlink_to(course / nbgrader_course.GRADEBOOK)
    (folder / "passwd").symlink_to("/etc/passwd")
    (folder / "etc").symlink_to("/etc", target_is_directory=True)

    process = _run_nbgrader(course, "autograde", "attention", "--force")
    assert process.returncode == 0, (process.stdout + process.stderr)[-3000:]
    scores = nbgrader_course.read_scores(course)
    assert sum(scores["bob"].values()) == 100
    assert scores["mallory"][NB03] == scores["mallory-clean"][NB03] == 0
    assert scores["mallory"][NB04] == 0
    assert {name: scores["mallory"][name] for name in NOTEBOOKS[:3]} == \
        {name: scores["mallory-clean"][name] for name in NOTEBOOKS[:3]}
    autograded = course / "autograded" / "mallory" / "attention"
    assert sorted(path.relative_to(autograded).as_posix() for path in autograded.rglob("*") if path.is_file()) == \
        sorted(f"{name}.ipynb" for name in NOTEBOOKS)
    texts = {name: (autograded / f"{name}.ipynb").read_text(encoding="utf-8") for name in NOTEBOOKS}
    assert not any(MARKER in text or "root:x:0:0" in text or "SQLite format" in text for text in texts.values())
    for note in ("answers.txt is a symbolic link: not followed", "sub/deep.txt is a symbolic link: not followed",
                 "hard.txt is a hard link to a file outside the submission: not copied",
                 "bob.txt is a symbolic link: not followed", "etc is a symbolic link: not followed"):
        assert note in texts[NB03], note
    assert f"{NB04}.ipynb is a symbolic link: not followed" in texts[NB04]


@pytest.mark.slow
def test_formgraders_second_click_after_a_resubmission_and_answers_in_feedback_are_graded_afresh(
        tmp_path, repo_root, monkeypatch):
    """Two of the issue's stale grades, through formgrader's Autograde button (NbGraderAPI.autograde in one
    long-lived process): a helper file resubmitted with the same name and size, and answers in feedback/ (which
    nbgrader never copies) beside 2,000 files. The grade recorded equals grading autograded/ on its own."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
    from autograder.isolation.limits import Limits

    course = _course(tmp_path / "course", repo_root)
    answers = _solutions(repo_root, NB01)
    uses = {"resubmitter": "helper.py", "hider": "feedback/answers.py"}
    for student, helper in uses.items():
        folder = course / "submitted" / student / "attention"
        _write(folder, NB01, _every_solution_cell(_notebook(repo_root, "release", NB01),
                                                  f"exec(open({helper!r}).read(), globals())"))
        for name in NOTEBOOKS[1:]:
            _write(folder, name, _notebook(repo_root, "release", name))
        (folder / helper).parent.mkdir(exist_ok=True)
        (folder / helper).write_text(answers)
    (course / "submitted" / "hider" / "attention" / "junk").mkdir()
    for number in range(nbgrader_lookahead.MAX_NEIGHBOURS + 1):
        (course / "submitted" / "hider" / "attention" / "junk" / f"{number}.txt").write_text("x")
    monkeypatch.chdir(course)
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    api = NbGraderAPI(CourseDirectory(config=config), config=Config(config))

    def click(student, ahead=False):
        outcome = api.autograde("attention", student)
        assert outcome["success"], outcome.get("error", "") + outcome.get("log", "")
        assert not ahead or f"{student}/{NB01} graded ahead" in outcome["log"]  # the look-ahead was used
        recorded = nbgrader_course.read_scores(course)[student][NB01]
        alone = course / "autograded" / student / "attention"
        (result,) = grade_notebooks([NotebookInput(NB01, alone / f"{NB01}.ipynb", NB01)],
                                    Options(limits=Limits(timeout=10, workers=1))).results
        return recorded, result.score

    assert click("hider") == (0, 0)  # nbgrader never copies feedback/: nor does grading ahead use it
    assert click("resubmitter", ahead=True) == (18, 18)
    helper = course / "submitted" / "resubmitter" / "attention" / "helper.py"
    wrong = "raise SystemExit  #"
    helper.write_text(wrong + "#" * (len(answers.encode()) - len(wrong)))  # the same name and size
    assert click("resubmitter") == (0, 0)


# Notebooks that read each other (issue 55): the answers of one notebook live in the student's other notebook, run
# with `%run` or read from its JSON. nbgrader converts 01 before 02: on the spot, autograded/ holds no 02 yet while
# 01 is graded, and only nbgrader's graded 01 (its given cells restored) while 02 is.
READ_RAW = """import json
for _cell in json.load(open("{name}.ipynb", encoding="utf-8"))["cells"]:
    if _cell["cell_type"] == "raw":
        exec("".join(_cell["source"]), globals())
"""
READING = ("01 runs 02", "01 reads 02", "02 runs 01", "02 reads 01")


def _answers(repo_root, name):
    """Notebook `name`'s answers as code that runs on its own (the imports its solution cells need first)."""
    return f"import torch\nfrom torch import nn\n\n{_solutions(repo_root, name)}"


def _grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _first_solution_cell_only(notebook, source):
    """Notebook with its first solution cell holding `source` and the others empty (their names come from it)."""
    cells = [cell for cell in notebook.cells if _grade_id(cell).startswith(SOLUTION)]
    for cell in cells:
        cell.source = source if cell is cells[0] else "pass  # defined above"
    return notebook


def _reading_each_other(repo_root, case):
    """(notebook 01, notebook 02) of a student whose `case` (READING) notebook takes its answers from the other."""
    reader, read = (NB01, NB02) if case.startswith("01") else (NB02, NB01)
    answers = _answers(repo_root, reader)
    if " runs " in case:  # %run of the other, solved, whose given inputs cell also holds the answers
        other = _notebook(repo_root, "source", read)
        given = next(cell for cell in other.cells if _grade_id(cell) == "given_inputs")
        given.source += f"\n\n{answers}"  # nbgrader's sanitized copy has the release's cell back
        mine = _first_solution_cell_only(_notebook(repo_root, "release", reader), f"%run ./{read}.ipynb")
    else:  # its JSON read as data: a raw cell of the other, unsolved
        other = _notebook(repo_root, "release", read)
        other.cells.append(nbformat.v4.new_raw_cell(answers))
        mine = _first_solution_cell_only(_notebook(repo_root, "release", reader), READ_RAW.format(name=read))
    return (mine, other) if reader == NB01 else (other, mine)


@pytest.mark.slow
def test_notebooks_that_read_each_other_get_the_same_totals_ahead_on_the_spot_and_from_attnkit_grade(tmp_path,
                                                                                                    repo_root):
    """Each way two notebooks read each other (01 runs 02, reads its JSON, and the reverse), with few files beside
    them (graded ahead) and with 2,001 (too many to digest: graded on the spot): `nbgrader autograde` through the
    course's config gives each student the totals `attnkit grade` gives, and the reading notebook its full points."""
    from autograder.course.exercises import of_notebook
    from autograder.grading import classroom
    from autograder.grading.notebooks import Options
    from autograder.isolation.limits import Limits

    course = _course(tmp_path / "course", repo_root)
    students = {}
    for case in READING:
        for crowded in (False, True):
            student = f"{case.replace(' ', '-')}{'-crowded' if crowded else ''}"
            students[student] = case
            folder = course / "submitted" / student / "attention"
            for name, notebook in zip((NB01, NB02), _reading_each_other(repo_root, case), strict=True):
                _write(folder, name, notebook)
            if crowded:
                (folder / "junk").mkdir()
                for number in range(nbgrader_lookahead.MAX_NEIGHBOURS + 1):
                    (folder / "junk" / f"{number}.txt").write_text("x")
    # --log-level=INFO: which way each notebook was graded is said in its own line, a detail
    process = _run_nbgrader(course, "autograde", "attention", "--force", "--log-level=INFO")
    log = process.stdout + process.stderr
    assert process.returncode == 0, log[-3000:]
    nbgrader_scores = nbgrader_course.read_scores(course)
    summary = classroom.grade_class(course / "submitted", tmp_path / "attnkit", Options(limits=Limits(timeout=10)))
    attnkit_scores = {document["student_id"]: {notebook["notebook"]: notebook["score"]
                                               for notebook in document["notebooks"]}
                      for document in summary.documents}
    disagreements = []
    for student, case in students.items():
        reader = NB01 if case.startswith("01") else NB02
        assert attnkit_scores[student][reader] == sum(exercise.points for exercise in of_notebook(reader)), student
        ours, theirs = ({name: scores[student][name] for name in (NB01, NB02)}
                        for scores in (attnkit_scores, nbgrader_scores))
        if ours != theirs:
            disagreements.append(f"{student}: attnkit grade {ours}, nbgrader autograde {theirs}")
        how = "graded in the sandbox" if student.endswith("crowded") else "graded ahead in the sandbox"
        assert f"{student}/{reader} {how}" in log, student  # each mode was the one that graded
    assert disagreements == [], "\n".join(disagreements)


@pytest.mark.slow
def test_a_malformed_notebook_stops_no_classmate(tmp_path, repo_root):
    """The issue's 36 bytes as one student's notebook 01: the two solved classmates beside it get their grades from
    `nbgrader autograde` of the whole course (nbgrader itself reports the broken file as that student's error)."""
    course = _course(tmp_path / "course", repo_root)
    for student in ("alice", "broken", "carol"):
        for name in NOTEBOOKS:
            _write(course / "submitted" / student / "attention", name, _notebook(repo_root, "source", name))
    (course / "submitted" / "broken" / "attention" / f"{NB01}.ipynb").write_text(
        '{"worksheets": [{"cells": null}]}', encoding="utf-8")
    process = _run_nbgrader(course, "autograde", "attention", "--force")
    scores = nbgrader_course.read_scores(course)
    assert sum(scores["alice"].values()) == sum(scores["carol"].values()) == 100, \
        (process.stdout + process.stderr)[-3000:]
    assert "attnkit could not grade" not in process.stdout + process.stderr


def test_nbgrader_collect_copies_the_students_own_files_only(tmp_path, repo_root, monkeypatch):
    from nbgrader.exchange import ExchangeFactory

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert ExchangeFactory(config=config).collect is nbgrader_intake.OwnFilesCollect
    secret = tmp_path / "instructor" / "solutions.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET")
    inbound = tmp_path / "inbound" / "mallory+attention+2026-11-26"
    (inbound / "sub").mkdir(parents=True)
    (inbound / f"{NB01}.ipynb").write_text('{"cells": []}')
    (inbound / "helper.py").write_text("x = 1")
    (inbound / "sub" / "own.txt").write_text("mine")
    (inbound / "answers.txt").symlink_to(secret)
    (inbound / "sub" / "deep.txt").symlink_to(secret)
    (inbound / "instructor").symlink_to(secret.parent, target_is_directory=True)
    (inbound / f"{NB03}.ipynb").symlink_to(secret)
    os.link(secret, inbound / "hard.txt")
    os.mkfifo(inbound / "pipe")
    collect = nbgrader_intake.OwnFilesCollect(coursedir=CourseDirectory(), authenticator=None)
    messages = []
    monkeypatch.setattr(collect.log, "warning", lambda text, *args: messages.append(text % args))
    dest = tmp_path / "submitted" / "mallory" / "attention"
    collect.do_copy(str(inbound), str(dest))
    assert sorted(path.relative_to(dest).as_posix() for path in dest.rglob("*") if not path.is_dir()) == \
        [f"{NB01}.ipynb", "helper.py", "sub/own.txt"]
    assert sorted(message.split(": ", 2)[2] for message in messages) == sorted([
        "answers.txt is a symbolic link: not followed", "sub/deep.txt is a symbolic link: not followed",
        "instructor is a symbolic link: not followed", f"{NB03}.ipynb is a symbolic link: not followed",
        "hard.txt is a hard link to a file outside the submission: not copied",
        "pipe is not a regular file (a FIFO): not copied"])
    # a link swapped in after attnkit's check is copied as a link, never followed (autograde then refuses it)
    (inbound / "pipe").unlink()
    monkeypatch.setattr(nbgrader_intake, "not_own", lambda folder: {})
    again = tmp_path / "again"
    collect.do_copy(str(inbound), str(again))
    assert (again / "answers.txt").is_symlink() and (again / "instructor").is_symlink()
    assert not any("SECRET" in path.read_text() for path in again.rglob("*")
                   if path.is_file() and not path.is_symlink() and path.name != "hard.txt")


def test_a_link_swapped_in_between_grading_ahead_and_nbgraders_copy_is_not_taken_ahead(tmp_path):
    secret = tmp_path / "solutions.py"
    secret.write_text("ANSWER = 42\n")
    folder = _student(tmp_path)
    (folder / f"{NB01}.ipynb").write_text('{"cells": []}')
    (folder / "helper.py").write_text("ANSWER = 0\n")
    run = nbgrader_lookahead.Run(tmp_path / "submitted", tmp_path / "autograded", "attention", "*", True, (NB01,),
                                 None, tuple(IGNORE))  # type: ignore[arg-type]
    nbgrader_lookahead.stage(run, "mallory", [NB01], tmp_path / "staged")
    (folder / "helper.py").unlink()
    (folder / "helper.py").symlink_to(secret)  # after grading ahead took its copy, before nbgrader's
    autograded = nbgrader_copy(tmp_path / "submitted", "mallory", tmp_path / "autograded")
    place_own_files(handed_in(tmp_path / "submitted", ("mallory", "attention"), IGNORE), tmp_path / "submitted",
                    ("mallory", "attention"), autograded)
    assert not (autograded / "helper.py").exists()
    with nbgrader_lookahead.staged(run, "mallory") as on_the_spot:  # what the notebook is graded beside, on the spot
        assert not (on_the_spot / "helper.py").exists()
        assert grading_digest(tmp_path / "staged") != grading_digest(on_the_spot)
