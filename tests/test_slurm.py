"""deploy/slurm-array.sh on a real Slurm cluster: 4 shards merged give what one `attnkit grade` gives, byte for byte.

A single-node cluster from Debian's packages starts in a temporary directory (tests/slurm_cluster.py). A class of
24 students (the bundled class of `make demo` twice, without its endless loop, plus a student with one notebook,
one with a file that is no notebook, an empty folder, and a solved notebook that sleeps SLOW_S seconds in its last
cell) is graded once by one `attnkit grade` process, then by the script exactly as docs/scaling.md gives it. Every file
the merge writes (grades.csv, grading.json, class_report.html, students/, gradescope/, feedback/) must equal the
one-process file byte for byte: nothing in them depends on the shard or the timing (the run's time and the shard
only go to the jobs' stderr), and both runs grade the same resolved SUBMITTED_DIR, so the notebook paths in the
records agree.

Then one task is cancelled mid-run (its other students written, while it grades the slow student, the last of its
shard), which cancels the merge; that index re-submitted alone with `sbatch --array=I` grades
only the students it had not written, and a merge after it again equals the one-process grades.

Runs as root with `slurm-wlm` and `munge` installed (`.ci/run` installs them); skips without, except in CI
(CI set), where it fails. About 2 minutes on an idle 2-core machine.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slurm_cluster import Cluster, missing_requirements

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.shards import MANIFEST, shard_index
from devtools.class_fixtures import BY_ID, CLASS, write_submission

pytestmark = pytest.mark.slow

SHARDS = 4
# The node has the machine's CPUs (2 here): one per task instead of the script's 4, and memory a CI runner has.
SBATCH_OPTIONS = ("--cpus-per-task=1", "--mem=1G")
SLOW_S = 6  # the slow student's cell: the window in which its task is cancelled
SLOW_ID = "24-slow-long-experiment"
JOBS_S = 240  # bound on any wait for jobs; the whole class takes well under a minute on 2 cores
SUBMITTED_LINE = re.compile(r"grading in job array (\d+) \((\d+) shards\), merging in job (\d+)")


def _write_class(submitted, repo_root):
    """24 students: ids numbered so that the slow one sorts last (its shard grades it after the others)."""
    members = [submission for submission in CLASS if submission.student_id != "adversarial-allclose-loop"]
    ids = []
    for number, submission in enumerate(members * 2, start=1):
        student_id = f"{number:02d}-{submission.student_id}"
        write_submission(submission, submitted / student_id / "attention", repo_root)
        ids.append(student_id)
    solved = BY_ID["solved"]
    one_notebook = write_submission(solved, submitted / "21-missing-notebooks" / "attention", repo_root)
    for name in NOTEBOOKS[1:]:
        (one_notebook / f"{name}.ipynb").unlink()
    not_a_notebook = write_submission(BY_ID["untouched"], submitted / "22-not-a-notebook" / "attention", repo_root)
    (not_a_notebook / f"{NOTEBOOKS[1]}.ipynb").write_text("not json", encoding="utf-8")
    (submitted / "23-empty-folder").mkdir()
    slow = write_submission(solved, submitted / SLOW_ID / "attention", repo_root) / f"{NOTEBOOKS[-1]}.ipynb"
    notebook = json.loads(slow.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                              "source": f"import time\n\ntime.sleep({SLOW_S})  # a long experiment left in"})
    slow.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return [*ids, "21-missing-notebooks", "22-not-a-notebook", "23-empty-folder", SLOW_ID]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reasons = missing_requirements()
    if reasons:
        message = f"no Slurm cluster here: {'; '.join(reasons)}"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: .ci/run installs slurm-wlm and munge in CI, and CI runs as root")
        pytest.skip(message)
    cluster = Cluster(tmp_path_factory.mktemp("slurm")).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def course(tmp_path_factory, repo_root):
    """The class, and what one `attnkit grade` process (a fresh one, all cores, default options) makes of it."""
    root = tmp_path_factory.mktemp("slurm-course").resolve()
    submitted = root / "submitted"
    students = _write_class(submitted, repo_root)
    attnkit = Path(sys.executable).parent / "attnkit"  # the venv running the tests (`make .venv` installs it)
    started = time.monotonic()
    subprocess.run([attnkit, "grade", submitted, "--out", root / "one-process"], check=True, capture_output=True,
                   timeout=600)
    return {"root": root, "submitted": submitted, "students": students, "attnkit": attnkit,
            "one_process": root / "one-process", "one_process_s": time.monotonic() - started,
            "script": repo_root / "deploy" / "slurm-array.sh"}


def _files(directory):
    return {path.relative_to(directory).as_posix(): path.read_bytes()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def _assert_same_files(merged, one_process):
    expected, got = _files(one_process), _files(merged)
    assert sorted(got) == sorted(expected), "files only merged: " \
        f"{sorted(set(got) - set(expected))}; only one-process: {sorted(set(expected) - set(got))}"
    differing = [path for path in expected if got[path] != expected[path]]
    assert not differing, f"merged files that differ from the one-process run: {differing}"


def _assert_every_student_once(merged, students):
    rows = (merged / "grades.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == sorted(students)  # each once, none missing
    manifest = json.loads((merged / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["complete"] is True and sorted(manifest["students"]) == sorted(students)


def _submit_class(cluster, course, grades):
    """deploy/slurm-array.sh SUBMITTED GRADES 4 OPTIONS, run in the course directory: (array job, merge job)."""
    stdout = cluster.run([course["script"], course["submitted"], grades, str(SHARDS), *SBATCH_OPTIONS],
                         cwd=course["root"], extra_env={"ATTNKIT": str(course["attnkit"])})
    submitted = SUBMITTED_LINE.search(stdout)
    assert submitted and submitted.group(2) == str(SHARDS), stdout
    return submitted.group(1), submitted.group(3)


def _all_completed(states):
    return all(state == "COMPLETED" for tasks in states.values() for state in tasks.values())


def test_four_slurm_shards_merge_into_the_grades_of_one_process(cluster, course, capsys):
    grades = course["root"] / "grades"
    started = time.monotonic()
    array_job, merge_job = _submit_class(cluster, course, grades)
    states = cluster.wait([array_job], JOBS_S, course["root"])
    graded_s = time.monotonic() - started
    states.update(cluster.wait([merge_job], JOBS_S, course["root"]))
    slurm_s = time.monotonic() - started
    assert _all_completed(states), f"{states}\n{cluster.outputs_text(course['root'])}"
    assert sorted(states[array_job]) == [str(index) for index in range(SHARDS)]
    for index in range(SHARDS):  # each task graded its own shard, each student once
        shard = json.loads((grades / "shards" / f"{index}-of-{SHARDS}" / MANIFEST).read_text(encoding="utf-8"))
        assert shard["shard"] == f"{index}/{SHARDS}" and shard["complete"] is True
        assert sorted(shard["students"]) == sorted(s for s in course["students"] if shard_index(s, SHARDS) == index)
    _assert_every_student_once(grades / "merged", course["students"])
    _assert_same_files(grades / "merged", course["one_process"])
    with capsys.disabled():  # the measurement docs/scaling.md quotes
        print(f"\ntest_slurm: {len(course['students'])} students, {SHARDS} Slurm tasks on {cluster.cpus} CPUs, "
              f"submit to all tasks done: {graded_s:.1f} s, to merged: {slurm_s:.1f} s; "
              f"one attnkit grade process: {course['one_process_s']:.1f} s")


def test_a_task_cancelled_mid_run_and_resubmitted_alone_resumes(cluster, course):
    grades = course["root"] / "grades-cancelled"
    victim = shard_index(SLOW_ID, SHARDS)
    shard_dir = grades / "shards" / f"{victim}-of-{SHARDS}"
    in_shard = sorted(s for s in course["students"] if shard_index(s, SHARDS) == victim)
    assert in_shard[-1] == SLOW_ID and len(in_shard) > 1, f"the slow student must be last of shard {victim}: {in_shard}"

    def written():
        return sorted(path.stem for path in (shard_dir / "students").glob("*.json"))

    array_job, merge_job = _submit_class(cluster, course, grades)
    # The task has written every student but the slow one, and is grading that one (SLOW_S seconds): cancel it.
    cluster.wait([array_job], JOBS_S, course["root"],
                 done=lambda states: states[array_job].get(str(victim)) == "RUNNING" and written() == in_shard[:-1])
    cluster.run(["scancel", f"{array_job}_{victim}"], cwd=course["root"])
    states = cluster.wait([array_job, merge_job], JOBS_S, course["root"])
    assert states[array_job][str(victim)] == "CANCELLED"
    assert all(states[array_job][str(index)] == "COMPLETED" for index in range(SHARDS) if index != victim), states
    assert states[merge_job][""] == "CANCELLED", states  # afterok can no longer be met: nothing half merged
    assert not (grades / "merged").exists()
    before = written()
    assert json.loads((shard_dir / MANIFEST).read_text(encoding="utf-8"))["complete"] is False
    assert before == in_shard[:-1], f"not cancelled while grading {SLOW_ID}: {before} written"

    # Re-submit that index alone, as docs/scaling.md says, then a merge that waits for it.
    resubmitted = cluster.run(["sbatch", "--parsable", f"--array={victim}", *SBATCH_OPTIONS, course["script"],
                               course["submitted"], grades, str(SHARDS)], cwd=course["root"],
                              extra_env={"ATTNKIT": str(course["attnkit"])}).strip().split(";")[0]
    merge_again = cluster.run(["sbatch", "--parsable", f"--dependency=afterok:{resubmitted}", *SBATCH_OPTIONS,
                               course["script"], course["submitted"], grades, str(SHARDS)], cwd=course["root"],
                              extra_env={"ATTNKIT": str(course["attnkit"])}).strip().split(";")[0]
    states = cluster.wait([resubmitted, merge_again], JOBS_S, course["root"])
    assert _all_completed(states), f"{states}\n{cluster.outputs_text(course['root'])}"
    summary = (course["root"] / f"attnkit-grade-{resubmitted}_{victim}.out").read_text(encoding="utf-8")
    resumed = f"shard {victim}/{SHARDS}: {len(in_shard)} students ({len(in_shard) - len(before)} graded, " \
              f"{len(before)} unchanged since the last run)"
    assert resumed in summary, summary  # only the students the cancelled task had not written
    assert written() == in_shard
    _assert_every_student_once(grades / "merged", course["students"])
    _assert_same_files(grades / "merged", course["one_process"])

