"""The two graders run as they are, timed from inside by phase: the bench's breakdown (devtools.bench).

`python -m devtools.timed_runs grade SUBMITTED OUT --times TIMES.json [--workers W]` does what `attnkit grade SUBMITTED
--out OUT` does (the zygote started early, then the class graded) and writes, to TIMES.json, the seconds of each of its
phases (GradePhases) and every notebook's stages summed (autograder.running.timing.StageTimes).

`python -m devtools.timed_runs nbgrader --times TIMES.json ARGS...` runs `nbgrader ARGS` (in the course directory, as
nbgrader_course runs it) with every nbconvert preprocessor's calls timed by class, exclusive of the preprocessors it
calls itself, and writes NbgraderPhases to TIMES.json: what is not a preprocessor's is nbgrader's own (its
gradebook, copies, nbconvert's validation after each preprocessor).

Both take `--launched-at` (the caller's time.time() just before it started the process) for the interpreter's own
start-up. Times go to a file: nbgrader and attnkit print on stdout and stderr.
"""

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENTERED = time.time()  # as early as this module can take it: the interpreter's start-up ends here


@dataclass
class GradePhases:
    """One `attnkit grade` run, phase after phase (with the parent's `exit`, they add up to its wall clock)."""

    start_up: float = 0.0  # the interpreter, up to this module
    imports: float = 0.0  # attnkit's grading package and torch, in the grader (the zygote imports beside it)
    zygote: float = 0.0  # waiting for the zygote, after the grader's own imports
    intake: float = 0.0  # ClassTimes.intake
    notebooks: float = 0.0  # ClassTimes.notebooks
    class_outputs: float = 0.0  # ClassTimes.class_outputs
    notebooks_graded: int = 0
    stages: dict[str, float] = field(default_factory=dict)  # StageTimes of every notebook, summed


@dataclass
class NbgraderPhases:
    """One nbgrader command: its start-up, every preprocessor class's seconds, and the rest of its run."""

    start_up: float = 0.0  # the interpreter, up to this module
    run: float = 0.0  # nbgrader's main(), with the import of nbgrader's app and its own imports
    preprocessors: dict[str, float] = field(default_factory=dict)  # class name -> seconds, exclusive

    @property
    def nbgraders_own(self) -> float:
        """What of the run no preprocessor took: nbgrader's app, gradebook and copies, nbconvert's validation."""
        return self.run - sum(self.preprocessors.values())


def _grade(args: argparse.Namespace) -> None:
    phases = GradePhases(start_up=max(0.0, ENTERED - args.launched_at))
    started = time.perf_counter()
    from autograder.cli import end_process, start_zygote_early

    start_zygote_early()  # as `attnkit grade` does, before its grading imports
    from autograder.grading.api import Options, grade_classroom
    from autograder.isolation.limits import Limits, default_workers
    from autograder.isolation.zygote import shared_zygote

    phases.imports = time.perf_counter() - started
    started = time.perf_counter()
    shared_zygote().resident_bytes()  # waits until it is ready
    phases.zygote = time.perf_counter() - started
    options = Options(limits=Limits(workers=args.workers or default_workers()))
    with open("/dev/null", "w", encoding="utf-8") as progress:
        summary = grade_classroom(Path(args.submitted), Path(args.out), options, progress_to=progress)
    phases.intake, phases.notebooks, phases.class_outputs = (summary.times.intake, summary.times.notebooks,
                                                             summary.times.class_outputs)
    phases.notebooks_graded = sum(len(document["notebooks"]) for document in summary.documents)
    phases.stages = dataclasses.asdict(summary.notebook_times)
    Path(args.times).write_text(json.dumps(dataclasses.asdict(phases)), encoding="utf-8")
    end_process(0)  # as the attnkit command ends


@contextlib.contextmanager
def timed_preprocessors() -> Iterator[dict[str, float]]:
    """While open, every nbconvert preprocessor's calls are timed: {class name: seconds}, exclusive of the
    preprocessors a call makes itself (nothing is counted twice). Put back as it was on exit."""
    from nbconvert.preprocessors import Preprocessor

    seconds: defaultdict[str, float] = defaultdict(float)
    nested: list[float] = []  # per running call: the seconds of the preprocessors it called itself
    applied = Preprocessor.__call__

    def timed_call(preprocessor: Preprocessor, nb: Any, resources: Any) -> Any:
        nested.append(0.0)
        started = time.perf_counter()
        try:
            return applied(preprocessor, nb, resources)
        finally:
            elapsed = time.perf_counter() - started
            inner = nested.pop()
            seconds[type(preprocessor).__name__] += elapsed - inner
            if nested:
                nested[-1] += elapsed

    Preprocessor.__call__ = timed_call  # type: ignore[method-assign]  # a timing tool's, undone below
    try:
        yield seconds
    finally:
        Preprocessor.__call__ = applied  # type: ignore[method-assign]


def _nbgrader(args: argparse.Namespace) -> None:
    phases = NbgraderPhases(start_up=max(0.0, ENTERED - args.launched_at))
    sys.argv = ["nbgrader", *args.nbgrader_args]
    status: object = 0
    # nbgrader's own imports (its app, nbconvert, jupyter_server's handlers: about 0.8 s of CPU) are in its run: timed
    # outside it, the bench counted them as the process ending
    started = time.perf_counter()
    with timed_preprocessors() as seconds:
        try:
            from nbgrader.apps.nbgraderapp import main as nbgrader_main

            nbgrader_main()
        except SystemExit as exit_:
            status = exit_.code
        finally:
            phases.run = time.perf_counter() - started
            phases.preprocessors = dict(seconds)
            Path(args.times).write_text(json.dumps(dataclasses.asdict(phases)), encoding="utf-8")
    if status:
        sys.exit(status)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devtools.timed_runs", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True)
    grade = commands.add_parser("grade", help="attnkit grade, timed by phase")
    grade.add_argument("submitted")
    grade.add_argument("out")
    grade.add_argument("--workers", type=int, default=None)
    grade.set_defaults(run=_grade)
    nbgrader = commands.add_parser("nbgrader", help="an nbgrader command, its preprocessors timed")
    nbgrader.add_argument("nbgrader_args", nargs=argparse.REMAINDER)
    nbgrader.set_defaults(run=_nbgrader)
    for command in (grade, nbgrader):
        command.add_argument("--times", required=True, help="where the JSON of the phases goes")
        command.add_argument("--launched-at", type=float, default=ENTERED, help="the caller's time.time() at launch")
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], None] = args.run
    run(args)


if __name__ == "__main__":
    main()
