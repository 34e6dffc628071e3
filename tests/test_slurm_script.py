"""deploy/slurm-array.sh without a cluster: what it submits, and the attnkit command each job runs.

A stand-in `sbatch` on PATH records its arguments and answers job ids; ATTNKIT="echo attnkit" shows the command a
job would run. tests/test_slurm.py runs the same script on a real Slurm cluster.
"""

import os
import subprocess

import pytest

FAKE_SBATCH = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$SBATCH_LOG"
echo $(( $(wc -l < "$SBATCH_LOG") + 40 ))
"""


@pytest.fixture
def submit(tmp_path, repo_root):
    """Run the script as on a login node, with the stand-in sbatch: (exit status, output, sbatch calls)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH, encoding="utf-8")
    (bin_dir / "sbatch").chmod(0o755)
    (tmp_path / "submitted").mkdir()
    log = tmp_path / "sbatch.log"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLURM_", "SBATCH_"))}
    env.update(PATH=f"{bin_dir}:{env['PATH']}", SBATCH_LOG=str(log))

    def run(*args, extra_env=None):
        result = subprocess.run([repo_root / "deploy" / "slurm-array.sh", *args], cwd=tmp_path, capture_output=True,
                                text=True, env={**env, **(extra_env or {})}, timeout=30)
        calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        return result.returncode, result.stdout + result.stderr, calls

    return run


def test_submits_the_array_then_a_merge_that_waits_for_it(submit, tmp_path):
    status, output, calls = submit("submitted", "grades", "4", "--partition=cpu", "--cpus-per-task=1")
    assert status == 0, output
    grades, submitted = tmp_path / "grades", tmp_path / "submitted"  # the script passes them on resolved
    array, merge = calls
    assert array.startswith("--parsable --array=0-3 --partition=cpu --cpus-per-task=1 ")
    assert array.endswith(f" {submitted} {grades} 4")
    # The options first, then the merge's own resources: the later option wins in sbatch.
    assert merge.startswith("--parsable --partition=cpu --cpus-per-task=1 --dependency=afterok:41 ")
    assert "--cpus-per-task=1 --mem=2G --time=00:30:00" in merge and merge.endswith(f" {submitted} {grades} 4")
    assert "grading in job array 41 (4 shards), merging in job 42" in output
    assert grades.is_dir()


def test_an_interactive_allocation_submits_like_a_login_node(submit):
    # salloc / srun --pty bash set SLURM_JOB_ID but not ENVIRONMENT=BATCH: this must not be taken for the merge job.
    status, output, calls = submit("submitted", "grades", "2", extra_env={"SLURM_JOB_ID": "7"})
    assert status == 0 and len(calls) == 2 and "--array=0-1" in calls[0], output


@pytest.mark.parametrize(("args", "complaint"), [
    (("submitted", "grades", "0"), "N must be a whole number >= 1, not '0'"),
    (("submitted", "grades", "four"), "N must be a whole number >= 1"),
    (("nowhere", "grades", "4"), "no such directory: nowhere"),
    (("submitted", "grades", "4", "--array=2"), "sets the array and the dependency itself"),
    (("submitted", "grades", "4", "-d", "afterok:3"), "sets the array and the dependency itself"),
    (("submitted",), "usage:"),
])
def test_refuses_bad_arguments_before_submitting_anything(submit, tmp_path, args, complaint):
    status, output, calls = submit(*args)
    assert status == 2 and complaint in output and calls == [], output
    assert not (tmp_path / "grades").exists()


def _in_job(repo_root, tmp_path, *args, **slurm):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLURM_", "SBATCH_"))}
    env.update(ATTNKIT="echo attnkit", ENVIRONMENT="BATCH", SLURM_JOB_ID="50", **slurm)
    result = subprocess.run([repo_root / "deploy" / "slurm-array.sh", *args], cwd=tmp_path, capture_output=True,
                            text=True, env=env, timeout=30, check=True)
    return result.stdout.strip()


def test_an_array_task_grades_its_shard_with_absolute_paths(repo_root, tmp_path):
    (tmp_path / "submitted").mkdir()
    command = _in_job(repo_root, tmp_path, "submitted", "grades", "4", SLURM_ARRAY_TASK_ID="2",
                      SLURM_CPUS_PER_TASK="3")
    assert command == (f"attnkit grade {tmp_path}/submitted --shard 2/4 --out {tmp_path}/grades/shards/2-of-4 "
                       "--workers 3")


def test_a_whole_array_by_hand_takes_n_from_the_array(repo_root, tmp_path):
    (tmp_path / "submitted").mkdir()
    command = _in_job(repo_root, tmp_path, "submitted", "grades", SLURM_ARRAY_TASK_ID="5", SLURM_ARRAY_TASK_MIN="1",
                      SLURM_ARRAY_TASK_COUNT="8")
    assert f"--shard 4/8 --out {tmp_path}/grades/shards/4-of-8 --workers 1" in command


def test_the_job_after_the_array_merges_the_shards_of_its_n(repo_root, tmp_path):
    (tmp_path / "submitted").mkdir()
    for name in ("0-of-2", "1-of-2", "0-of-12"):
        (tmp_path / "grades" / "shards" / name).mkdir(parents=True)
    command = _in_job(repo_root, tmp_path, "submitted", "grades", "2")
    shards = tmp_path / "grades" / "shards"
    assert command == f"attnkit merge {shards}/0-of-2 {shards}/1-of-2 --out {tmp_path}/grades/merged"
