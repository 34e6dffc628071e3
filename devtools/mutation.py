"""Mutation score of the checks: how many mutants of the reference solutions lose points.

    python -m devtools.mutation [--jobs N] [--only TEXT] [--list] [--fail-under PERCENT]      (make mutation)

cosmic-ray's operators make every mutant of `solutions/*.py` (devtools.mutants). Each mutant is loaded in memory,
and every exercise whose names reach the mutated line gets the mutated objects in its namespace and is graded
in-process with all its checks (`run_exercise(..., include_hidden=True)`). A mutant is killed when any of those
exercises loses points. Mutants listed in devtools/equivalent_mutants.toml behave like the reference (a reviewed
list, each entry tested in tests/test_mutation_sample.py) and are left out of the score; so are mutants on lines
no exercise uses and mutants that raise as their module is executed, which are counted apart.

Prints the score per exercise and overall, then every survivor (file:line, operator, the changed line, its key),
with a note when a differential run against the reference finds no difference (a candidate for the list).
Exits 1 when the score is below --fail-under (default: the target, 97 %) or a listed equivalent no longer exists.
"""

import argparse
import hashlib
import itertools
import math
import multiprocessing
import signal
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.running.runner import run_exercise
from devtools import differential
from devtools import mutants as mutant_source

EQUIVALENTS_FILE = Path(__file__).resolve().parent / "equivalent_mutants.toml"
TARGET = 97.0
MAX_JOBS = 2  # the dev box's cores are shared
PROGRESS_EVERY = 25
MUTANT_TIME_LIMIT = 60  # seconds for all the exercises of one mutant; a loop the mutation made endless stops here

KILLED, SURVIVED, TIMEOUT, IMPORT_ERROR, UNUSED, EQUIVALENT = (
    "killed", "survived", "timeout", "raises at import", "no exercise uses its line", "equivalent")


@dataclass
class Outcome:
    mutant: mutant_source.Mutant
    status: str
    exercises: tuple = ()  # the exercises that use the mutated line
    lost_points: tuple = ()  # those among them that lost points
    detail: str = ""


@dataclass
class Score:
    outcomes: list
    stale_equivalents: list = field(default_factory=list)  # listed keys no generated mutant has

    def of(self, status):
        return [outcome for outcome in self.outcomes if outcome.status == status]

    @property
    def counted(self):
        """The mutants the score is about: used, importable, not equivalent."""
        return [outcome for outcome in self.outcomes if outcome.status in (KILLED, SURVIVED, TIMEOUT)]

    @property
    def killed(self):
        return [outcome for outcome in self.counted if outcome.status != SURVIVED]

    @property
    def percent(self):
        return 100.0 * len(self.killed) / len(self.counted) if self.counted else 100.0


def load_equivalents(path=EQUIVALENTS_FILE):
    """{key: reason} of the reviewed equivalent mutants; a clear error for a malformed file."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    equivalents = {}
    for index, entry in enumerate(data.get("equivalent", []), start=1):
        key, reason = entry.get("key"), entry.get("reason")
        if not isinstance(key, str) or not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{path}: entry {index} needs a `key` and a one-line `reason`")
        if key in equivalents:
            raise ValueError(f"{path}: {key} is listed twice")
        equivalents[key] = reason
    return equivalents


class MutantTimedOut(KeyboardInterrupt):
    """Raised by the alarm. A KeyboardInterrupt, because probes turn every other exception into a failed check
    and go on with the next one: this must stop the mutant's whole run."""


def _alarm(_signum, _frame):
    raise MutantTimedOut


def run_mutant(mutant, usage=None):
    """Grade one mutant with every exercise that uses its line: its Outcome (never EQUIVALENT)."""
    usage = usage if usage is not None else mutant_source.usage()
    exercises = tuple(sorted(usage.get((mutant.file, mutant.line), ()),
                             key=lambda exercise_id: [e.id for e in EXERCISES].index(exercise_id)))
    if not exercises:
        return Outcome(mutant, UNUSED)
    try:
        loaded = mutant_source.load(mutant)
    except mutant_source.MutantImportError as error:
        return Outcome(mutant, IMPORT_ERROR, exercises, detail=str(error))
    lost = []
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(MUTANT_TIME_LIMIT)
    try:
        for exercise_id in exercises:
            exercise = EXERCISES_BY_ID[exercise_id]
            results = run_exercise(exercise_id, mutant_source.namespace_for(exercise, loaded), include_hidden=True,
                                   lang="en")
            if sum(result.score for result in results) < exercise.points:
                lost.append(exercise_id)
    except MutantTimedOut:
        return Outcome(mutant, TIMEOUT, exercises, tuple(lost), f"over {MUTANT_TIME_LIMIT} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(mutant, KILLED if lost else SURVIVED, exercises, tuple(lost))


def _worker_setup():
    torch.set_num_threads(1)


def _run_in_worker(mutant):
    return run_mutant(mutant)


def sample(mutants, equivalents, size=40):
    """A small, stable sample of the mutants the score counts: about `size`, spread over the solution files in
    proportion to their mutants (at least one each), the lowest sha256 of the key first in each file. Only mutants
    on a line an exercise uses, not listed as equivalent, whose module executes."""
    candidates = {}
    for mutant in mutants:
        if mutant.key in equivalents or (mutant.file, mutant.line) not in mutant_source.usage():
            continue
        candidates.setdefault(mutant.file, []).append(mutant)
    total = sum(len(group) for group in candidates.values())
    chosen = []
    for group in candidates.values():
        wanted = max(1, math.floor(size * len(group) / total + 0.5))
        ranked = sorted(group, key=lambda mutant: hashlib.sha256(mutant.key.encode()).hexdigest())
        chosen += list(itertools.islice((mutant for mutant in ranked if _loads(mutant)), wanted))
    return chosen


def _loads(mutant):
    try:
        mutant_source.load(mutant)
    except mutant_source.MutantImportError:
        return False
    return True


def score(mutants, equivalents, *, jobs=MAX_JOBS, progress=None):
    """Run every mutant not listed as equivalent; equivalent ones are recorded without running."""
    outcomes = [Outcome(mutant, EQUIVALENT) for mutant in mutants if mutant.key in equivalents]
    to_run = [mutant for mutant in mutants if mutant.key not in equivalents]
    jobs = max(1, min(jobs, MAX_JOBS, len(to_run) or 1))
    started = time.monotonic()
    if jobs == 1:
        _worker_setup()
        results = (_run_in_worker(mutant) for mutant in to_run)
        pool = None
    else:
        # fork: the workers inherit torch, the checks and the parsed mutants instead of importing them again.
        pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_setup)
        results = pool.imap_unordered(_run_in_worker, to_run, chunksize=4)
    try:
        for done, outcome in enumerate(results, start=1):
            outcomes.append(outcome)
            if progress and (done % PROGRESS_EVERY == 0 or done == len(to_run)):
                killed = sum(o.status in (KILLED, TIMEOUT) for o in outcomes)
                survived = sum(o.status == SURVIVED for o in outcomes)
                progress(f"mutation: {done}/{len(to_run)} run, {killed} killed, {survived} survived "
                         f"({time.monotonic() - started:.0f} s)")
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    order = {mutant.key: index for index, mutant in enumerate(mutants)}
    outcomes.sort(key=lambda outcome: order[outcome.mutant.key])
    stale = sorted(set(equivalents) - set(order))
    return Score(outcomes, stale)


def report(result, equivalents, *, differential=None):
    """The printed report: per exercise, overall, the survivors, the other categories."""
    lines = ["Mutation score of the checks (mutants of solutions/ by cosmic-ray; killed = an exercise loses points)",
             "", f"{'exercise':<25} {'killed':>7} / {'total':<6} {'score':>7}   lost points here"]
    for exercise in EXERCISES:
        reaching = [o for o in result.counted if exercise.id in o.exercises]
        if not reaching:
            continue
        killed = [o for o in reaching if o.status != SURVIVED]
        here = sum(exercise.id in o.lost_points for o in reaching)
        lines.append(f"{exercise.id:<25} {len(killed):>7} / {len(reaching):<6} "
                     f"{100.0 * len(killed) / len(reaching):>6.1f} %   {here}")
    counted, killed = result.counted, result.killed
    lines += ["", f"overall: {len(killed)}/{len(counted)} non-equivalent mutants lose points ({result.percent:.1f} %; "
                  f"target {TARGET:.0f} %)",
              f"generated {len(result.outcomes)}: {len(result.of(EQUIVALENT))} listed as equivalent, "
              f"{len(result.of(UNUSED))} on lines no exercise uses, {len(result.of(IMPORT_ERROR))} raise at import, "
              f"{len(result.of(TIMEOUT))} killed by the time limit"]
    survivors = result.of(SURVIVED)
    lines += ["", f"survivors ({len(survivors)}):" if survivors else "survivors: none"]
    for outcome in survivors:
        mutant = outcome.mutant
        note = ""
        if differential is not None:
            note = "  [no difference found on random inputs: equivalent?]" if not differential(mutant) else ""
        lines.append(f"  {mutant.where}  {mutant.operator}  in {', '.join(outcome.exercises)}{note}")
        lines.append(f"      - {mutant.original_line}")
        lines.append(f"      + {mutant.mutated_line}")
        lines.append(f"      key: {mutant.key}")
    for outcome in result.of(IMPORT_ERROR):
        lines.append(f"raises at import: {outcome.mutant.where} {outcome.mutant.operator}: {outcome.detail}")
    for key in result.stale_equivalents:
        lines.append(f"listed as equivalent but no longer generated: {key} ({equivalents[key]})")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m devtools.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=MAX_JOBS, help=f"worker processes (at most {MAX_JOBS})")
    parser.add_argument("--only", default="", help="run only mutants whose key contains this text")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="run only the stable sample of about N mutants that `make test` runs")
    parser.add_argument("--list", action="store_true", help="list the mutants and their keys, run nothing")
    parser.add_argument("--fail-under", type=float, default=TARGET, help="exit 1 below this score (percent)")
    parser.add_argument("--no-differential", action="store_true",
                        help="do not compare survivors with the reference on random inputs")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.sample < 0:
        parser.error("--sample must be positive")
    try:
        equivalents = load_equivalents()
    except (OSError, ValueError, tomllib.TOMLDecodeError) as error:
        print(f"mutation: cannot read the equivalent list: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    print("mutation: generating mutants with cosmic-ray ...", file=sys.stderr)
    mutants = [mutant for mutant in mutant_source.all_mutants() if args.only in mutant.key]
    if args.sample > 0:
        mutants = sample(mutants, equivalents, args.sample)
    if args.list:
        for mutant in mutants:
            print(f"{mutant.key}\t{mutant.where}\t{mutant.original_line}  =>  {mutant.mutated_line}")
        return 0
    if not mutants:
        print(f"mutation: no mutant's key contains {args.only!r}", file=sys.stderr)
        return 2
    result = score(mutants, equivalents, jobs=args.jobs, progress=lambda text: print(text, file=sys.stderr))
    if args.only or args.sample:
        result.stale_equivalents = []  # only a full run can tell that a key disappeared
    print(report(result, equivalents, differential=None if args.no_differential else differential.differs))
    print(f"\nmutation: {len(result.outcomes)} mutants in {time.monotonic() - started:.0f} s "
          f"with {min(args.jobs, MAX_JOBS)} processes", file=sys.stderr)
    return 1 if result.percent < args.fail_under or result.stale_equivalents else 0


if __name__ == "__main__":
    sys.exit(main())
