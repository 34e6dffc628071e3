#!/usr/bin/env bash
# attnkit on Slurm: grade a class as a job array of N shards, then merge them (README, "Grading thousands of
# students"). Task I of the array runs `attnkit grade --shard I/N` into GRADES_DIR/shards/I-of-N; a job that
# depends on the whole array merges them into GRADES_DIR/merged (grades.csv, students/, gradescope/, feedback/,
# class_report.html).
#
#   deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR [N [SBATCH_OPTION...]]   # on the login node: submits both
#
# N is 8 by default. Options after N go to both sbatch calls, before the merge job's own CPUs, memory and time
# (e.g. --partition=cpu --account=course42, or --cpus-per-task=2 --mem=4G where the #SBATCH lines below ask for
# more than a node has: Slurm would accept the array and leave it pending with reason PartitionConfig forever).
# Or by hand, the same two steps:
#
#   sbatch --array=0-7 deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR 8               # an array task: grades
#   sbatch --dependency=afterok:<array job id> deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR 8   # not one: merges
#
# SUBMITTED_DIR is nbgrader's submitted/<student_id>/attention/*.ipynb, on a file system every node sees.
# ATTNKIT says how to run attnkit (default: `attnkit` on PATH), e.g. ATTNKIT=/opt/attnkit/.venv/bin/attnkit or
# ATTNKIT="apptainer exec attnkit.sif attnkit" (an image built from deploy/Dockerfile).
# A failed task cancels the merge (its dependency can never be met). Re-submit that task alone, giving N, then a
# merge after it: `sbatch --array=3 deploy/slurm-array.sh SUBMITTED_DIR GRADES_DIR 8` (without N, a one-task array
# would think N is 1), then `sbatch --dependency=afterok:<its job id> deploy/slurm-array.sh SUBMITTED_DIR
# GRADES_DIR 8`. The task resumes: students it had written are not graded again. Running the first command again
# does the same for every shard (a complete shard only re-checks its students), as does a re-run after late
# submissions: only students whose notebooks changed are graded again.
#
#SBATCH --job-name=attnkit-grade
#SBATCH --cpus-per-task=4
#SBATCH --mem=12G
#SBATCH --time=02:00:00
#SBATCH --output=%x-%A_%a.out
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 SUBMITTED_DIR GRADES_DIR [N [SBATCH_OPTION...]]" >&2
    exit 2
fi
submitted=$1
grades=$2
read -r -a attnkit <<< "${ATTNKIT:-attnkit}"

# Slurm sets ENVIRONMENT=BATCH in batch jobs only: an interactive allocation (salloc, srun --pty bash) has
# SLURM_JOB_ID too, and submits from there like a login node.
if [[ -z "${SLURM_JOB_ID:-}" || "${ENVIRONMENT:-}" != BATCH ]]; then
    # Not a batch job: submit the array of N grading tasks, then the merge that waits for all of them.
    shards=${3:-8}
    sbatch_options=("${@:4}")
    if ! [[ "$shards" =~ ^[1-9][0-9]*$ ]]; then
        echo "$0: N must be a whole number >= 1, not '$shards'" >&2
        exit 2
    fi
    for option in "${sbatch_options[@]}"; do
        case "$option" in
            -a | -a* | --array | --array=* | -d | -d* | --dependency | --dependency=*)
                echo "$0: '$option': this script sets the array and the dependency itself; to re-submit some" \
                    "tasks, run sbatch --array=I $0 SUBMITTED_DIR GRADES_DIR $shards" >&2
                exit 2 ;;
        esac
    done
    if ! command -v sbatch >/dev/null; then
        echo "$0: sbatch not found: run this on a Slurm login node" >&2
        exit 2
    fi
    if [[ ! -d "$submitted" ]]; then
        echo "$0: no such directory: $submitted (nbgrader's submitted/<student_id>/attention/*.ipynb)" >&2
        exit 2
    fi
    submitted=$(realpath "$submitted")
    mkdir -p "$grades"
    grades=$(realpath "$grades")
    array_job=$(sbatch --parsable --array="0-$((shards - 1))" "${sbatch_options[@]}" \
        "$0" "$submitted" "$grades" "$shards")
    array_job=${array_job%%;*}  # --parsable prints "jobid[;cluster]"
    merge_job=$(sbatch --parsable "${sbatch_options[@]}" --dependency="afterok:${array_job}" \
        --kill-on-invalid-dep=yes --job-name=attnkit-merge --cpus-per-task=1 --mem=2G --time=00:30:00 \
        --output="%x-%j.out" "$0" "$submitted" "$grades" "$shards")
    echo "attnkit: grading in job array ${array_job} (${shards} shards), merging in job ${merge_job%%;*}:" \
        "${grades}/merged/grades.csv when both are done"
    exit 0
fi

# Inside a job: absolute paths, so that the records name the notebooks alike however each job was submitted.
submitted=$(realpath "$submitted")
grades=$(realpath -m "$grades")

if [[ -n "${SLURM_ARRAY_TASK_ID:-}" ]]; then
    # An array task: grade shard I of N.
    if [[ -n "${3:-}" ]]; then
        # N given (as this script submits it, or a re-submission of some tasks: sbatch --array=3,5 ... 8):
        # I is the task id itself; attnkit refuses one outside 0..N-1.
        index=$SLURM_ARRAY_TASK_ID
        count=$3
    else
        # The whole array by hand (--array=0-7, or 1-8: I counts from the first task): N is its number of tasks.
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
