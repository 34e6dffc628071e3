#!/usr/bin/env bash
# attnkit on Slurm: grade a class as a job array of N shards, then merge them (README, "Grading thousands of
# students"). Task I of the array runs `attnkit grade --shard I/N` into GRADES_DIR/shards/I-of-N; a job that
# depends on the whole array merges them into GRADES_DIR/merged (grades.csv, students/, gradescope/, feedback/,
# class_report.html).
#
#   deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR [N]       # on the login node: submits both (N = 8 by default)
#
# or by hand, the same two steps:
#
#   sbatch --array=0-7 deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR                  # an array task: grades
#   sbatch --dependency=afterok:<array job id> deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR 8   # not one: merges
#
# SUBMITTED_DIR is nbgrader's submitted/<student_id>/attention/*.ipynb, on a file system every node sees.
# ATTNKIT says how to run attnkit (default: `attnkit` on PATH), e.g. ATTNKIT=/opt/attnkit/.venv/bin/attnkit or
# ATTNKIT="apptainer exec attnkit.sif attnkit" (an image built from deploy/Dockerfile).
# A failed task can be re-submitted alone, giving N: `sbatch --array=3 deploy/slurm-array.sh SUBMITTED_DIR
# GRADES_DIR 8` (without N, a one-task array would think N is 1). It resumes; so does a re-run of the whole array
# after late submissions: only students whose notebooks changed are graded again.
#
#SBATCH --job-name=attnkit-grade
#SBATCH --cpus-per-task=4
#SBATCH --mem=12G
#SBATCH --time=02:00:00
#SBATCH --output=%x-%A_%a.out
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 SUBMITTED_DIR GRADES_DIR [N]" >&2
    exit 2
fi
submitted=$1
grades=$2
read -r -a attnkit <<< "${ATTNKIT:-attnkit}"

if [[ -z "${SLURM_JOB_ID:-}" ]]; then
    # Not inside Slurm: submit the array of N grading tasks, then the merge that waits for all of them.
    shards=${3:-8}
    if ! [[ "$shards" =~ ^[1-9][0-9]*$ ]]; then
        echo "$0: N must be a whole number >= 1, not '$shards'" >&2
        exit 2
    fi
    submitted=$(realpath "$submitted")
    mkdir -p "$grades"
    grades=$(realpath "$grades")
    array_job=$(sbatch --parsable --array="0-$((shards - 1))" "$0" "$submitted" "$grades")
    array_job=${array_job%%;*}  # --parsable prints "jobid[;cluster]"
    merge_job=$(sbatch --parsable --dependency="afterok:${array_job}" --kill-on-invalid-dep=yes \
        --job-name=attnkit-merge --cpus-per-task=1 --mem=2G --time=00:30:00 --output="%x-%j.out" \
        "$0" "$submitted" "$grades" "$shards")
    echo "attnkit: grading in job array ${array_job} (${shards} shards), merging in job ${merge_job%%;*}:" \
        "${grades}/merged/grades.csv when both are done"
    exit 0
fi

if [[ -n "${SLURM_ARRAY_TASK_ID:-}" ]]; then
    # An array task: grade shard I of N.
    if [[ -n "${3:-}" ]]; then
        # N given: a re-submission of some tasks (sbatch --array=3,5 ... 8): I is the task id itself.
        index=$SLURM_ARRAY_TASK_ID
        count=$3
    else
        # The whole array (--array=0-7, or 1-8: I counts from the first task): N is its number of tasks.
        if [[ "${SLURM_ARRAY_TASK_STEP:-1}" != 1 ]]; then
            echo "$0: the array must be contiguous (--array=0-N-1), not --array=...:${SLURM_ARRAY_TASK_STEP}" >&2
            exit 2
        fi
        index=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
        count=${SLURM_ARRAY_TASK_COUNT:?SLURM_ARRAY_TASK_COUNT is not set (Slurm >= 18.08 sets it in array tasks)}
    fi
    exec "${attnkit[@]}" grade "$submitted" --shard "${index}/${count}" \
        --out "${grades}/shards/${index}-of-${count}" --workers "${SLURM_CPUS_PER_TASK:-1}"
fi

# The job after the array: merge the N shards (only those of this N, should older splits be lying around).
shards=${3:?"N, the number of shards, is needed to merge: $0 SUBMITTED_DIR GRADES_DIR N"}
exec "${attnkit[@]}" merge "${grades}/shards/"*-of-"${shards}" --out "${grades}/merged"
