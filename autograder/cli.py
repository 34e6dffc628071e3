"""`attnkit`: grade notebooks in isolated children, fast (docs/instructor/grade.md).

    attnkit check NOTEBOOK... [--json]            every check, hidden included; a line per failed check
    attnkit grade SUBMITTED_DIR --out OUT_DIR     a class in nbgrader layout -> grades.csv, JSON, Gradescope, HTML
          [--shard I/N]                           only the students of shard I of N (stable hash of the id)
          [--exercise ID | --notebook NAME]       grade those exercises again, keep the others from OUT_DIR
    attnkit points                                every exercise's and check's points (course_settings.toml)
    attnkit merge OUT_DIR... --out MERGED         the shards' outputs -> one grades.csv, per-student files, report
    attnkit similarity SUBMITTED_DIR --out OUT    pairs whose code or wrong outputs look copied (evidence only)
    attnkit export SOURCE --canvas|--moodle ROSTER.csv --out FILE    grades for the LMS's import, from an
          nbgrader course's gradebook (SOURCE: the course folder) or an `attnkit grade` output
    attnkit report COURSE_DIR                     an nbgrader course's class report from its gradebook (no grading)
    attnkit gradescope build OUT.zip              the Gradescope autograder bundle
    attnkit student-kit build OUT_DIR             the student kit: public checks as stored vectors, no reference
    attnkit course new DIR [--roster ROSTER.csv] [--exchange EXCHANGE_DIR]   an nbgrader course of one's own
    attnkit course formgrader DIR [--port N]      JupyterLab with formgrader for it, on 127.0.0.1 with a token
    attnkit course remove-student DIR ID          a student (the rehearsal's login) out of the course, kept aside
    attnkit course points DIR [--set ID=N]...     the course's points (DIR/course_settings.toml); --set changes them
                                                  and regenerates the release, kit included (`course release DIR`:
                                                  after an edit of the file by hand)
    attnkit -v COMMAND ... (or COMMAND ... -v)    also progress and diagnostics on stderr (logging's DEBUG)

Exit status: 0 when grading happened (whatever the scores), 2 when it could not (the reason on stderr), 1 when
`grade` hit a grader error for some students: grades.csv still has every student, those marked "grader error";
3 when the disk holding OUT_DIR filled up: the run stopped, the students written are kept, run it again;
`export` exits 1 when a graded student is not in the roster (listed on stderr and in FILE.notes.csv), and 2, writing
nothing, when a roster row matches no student of the gradebook (the rows are named).

Points: `grade DIR/submitted`, `similarity DIR/submitted` and `export DIR` on a course folder that keeps its own points
(DIR/course_settings.toml, which `course new` writes) grade and export with them; elsewhere the checkout's
course_settings.toml, or the file ATTNKIT_COURSE_SETTINGS names.
"""

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from autograder import help_pages, logs
from autograder.course.assignment import DEFAULT_SEED
from autograder.isolation.limits import Limits, default_workers
from autograder.outputs.disk import OutputDiskFull
from autograder.refusal import Refused
from autograder.safe_text import clean, clean_data

if TYPE_CHECKING:  # the grading stage imports torch and the checks: only when a command grades
    from autograder.course.course_settings import AppliedPoints
    from autograder.grading.api import Options
    from autograder.grading.shards import Shard

__all__ = ["DISK_FULL", "GRADER_FAILED", "USAGE_ERROR", "end_process", "main", "run", "start_zygote_early"]

USAGE_ERROR = 2
GRADER_FAILED = 1  # grading ran and wrote grades.csv, but some student (or a class-wide file) hit a grader error
DISK_FULL = 3  # OUT_DIR's disk filled up: stopped, nobody marked; the same command resumes

logger = logging.getLogger("autograder.cli")  # by name: run as `python -m autograder.cli`, __name__ is "__main__"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logs.configure(args.verbose)
    try:
        return args.run(args)
    except (CannotGrade, Refused) as problem:
        logger.error("attnkit %s: %s", args.command, problem)
        return USAGE_ERROR
    except OutputDiskFull as problem:
        logger.error("attnkit %s: %s", args.command, problem)
        return DISK_FULL
    except KeyboardInterrupt:
        logger.warning("attnkit %s: interrupted", args.command)
        return 130


def run() -> NoReturn:
    """The `attnkit` command: `main()`, then the process ends at once with its status.

    Everything a command writes is closed when it returns (each output file is written whole and renamed into
    place); what is left is the interpreter's teardown of torch and the checks, a third of a second after every
    `attnkit grade` that only delays the prompt. The log and the standard streams are flushed and the grading zygote,
    if one was started, is stopped first. Called in-process (tests, other tools), `main()` returns instead.
    """
    end_process(main())


def end_process(status: int) -> NoReturn:
    """End this process now with `status`: the log and the standard streams flushed, the grading zygote (if one
    was started) stopped, the interpreter's teardown skipped (see `run`)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more can be said anyway
            stream.flush()
    zygote = sys.modules.get("autograder.isolation.zygote")  # only a command that grades imported (and started) it
    if zygote is not None:
        zygote.shared_zygote().close()
    os._exit(status)


class CannotGrade(Exception):
    """The command line's arguments cannot be used (an option out of range...): exit status 2, as for the stages'
    Refused."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnkit", description=__doc__.split("\n")[0],
                                     epilog=help_pages.main_epilog(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _verbose_option(parser, default=0)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="grade notebooks with every check and print a report")
    check.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    _limit_options(check)
    check.set_defaults(run=_check)

    grade = commands.add_parser("grade", help="grade a class: SUBMITTED_DIR/<student>/attention/*.ipynb")
    grade.add_argument("submitted", type=Path, metavar="SUBMITTED_DIR")
    grade.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
    grade.add_argument("--shard", type=_shard_argument, default=None, metavar="I/N",
                       help="grade only shard I of N (0 <= I < N), chosen by a stable hash of the student id; "
                            "give each shard its own OUT_DIR, then `attnkit merge` them")
    grade.add_argument("--exercise", action="append", default=[], metavar="ID",
                       help="regrade exercise ID for every student of OUT_DIR's earlier run, keeping the other "
                            "exercises' results (repeatable; `attnkit points` lists the ids)")
    grade.add_argument("--notebook", action="append", default=[], metavar="NAME",
                       help="regrade every exercise of notebook NAME (e.g. 03_causal_attention) the same way")
    _limit_options(grade)
    grade.set_defaults(run=_grade)

    points = commands.add_parser("points", help="every exercise's and check's points, with course_settings.toml's "
                                 "changes (refused, naming the problem, when the file is wrong)")
    points.set_defaults(run=_points)

    merge = commands.add_parser("merge", help="combine the OUT_DIRs of `attnkit grade --shard` runs into one")
    merge.add_argument("shards", nargs="+", type=Path, metavar="OUT_DIR")
    merge.add_argument("--out", type=Path, required=True, metavar="MERGED")
    merge.set_defaults(run=_merge)

    similarity = commands.add_parser("similarity", help="pairs of students whose code or wrong outputs look "
                                     "copied: evidence for a human, never a verdict")
    similarity.add_argument("submitted", type=Path, metavar="SUBMITTED_DIR")
    similarity.add_argument("--out", type=Path, required=True, metavar="OUT_DIR")
    similarity.add_argument("--base", type=Path, nargs="+", action="extend", default=[], metavar="FILE_OR_DIR",
                            help="code honest students may share (e.g. the book's chapter code): .py/.ipynb files "
                                 "or folders; the release and the reference are always excluded")
    similarity.add_argument("--grades", type=Path, default=None, metavar="GRADES_DIR",
                            help="an `attnkit grade` output for these submissions (default: grade them first "
                                 "into OUT_DIR/grades)")
    similarity.add_argument("--threshold", type=float, default=None, help="flag pairs scoring at least this, "
                            "in [0, 1] (default 0.5)")
    _limit_options(similarity)
    similarity.set_defaults(run=_similarity)

    export = commands.add_parser("export", help="grades into a Canvas or Moodle gradebook import file: from an "
                                 "nbgrader course's gradebook or an `attnkit grade` output")
    export.add_argument("source", type=Path, metavar="SOURCE", help="an nbgrader course folder (its gradebook.db "
                        "is the record: manual grades, extra credit, late penalties) or its gradebook file; or an "
                        "`attnkit grade`/`attnkit merge` output (GRADES_DIR) for a course without nbgrader")
    lms = export.add_mutually_exclusive_group(required=True)
    lms.add_argument("--canvas", type=Path, metavar="ROSTER.csv", help="Canvas's gradebook export (Grades > Export)")
    lms.add_argument("--moodle", type=Path, metavar="ROSTER.csv", help="a Moodle grade export or user list (CSV)")
    export.add_argument("--out", type=Path, required=True, metavar="FILE")
    export.add_argument("--id-column", choices=("email", "username", "idnumber"), default=None,
                        help="Moodle: the column that identifies each user in the import file")
    export.add_argument("--per-exercise", action="store_true", help="a column per exercise besides the total")
    export.add_argument("--column", default=None, help="the grade column's name (Canvas: the roster's assignment "
                        "column, e.g. \"Attention (123)\"; default: the roster's only one, else \"Attention\")")
    export.add_argument("--match", default=None, metavar="COLUMN", help="the roster column naming the students: "
                        "their ids, or the emails the gradebook holds (default: the identity column that matches the "
                        "most)")
    export.add_argument("--assignment", default=None, metavar="NAME", help="an nbgrader course: the gradebook's "
                        "assignment (default: attention)")
    _encoding_option(export)
    export.set_defaults(run=_export)

    report = commands.add_parser("report", help="an nbgrader course's class report from its gradebook: the totals "
                                 "formgrader, the feedback and the exports show, every student a row; no grading")
    report.add_argument("course", type=Path, metavar="COURSE_DIR", help="the course folder (its gradebook.db)")
    report.add_argument("--out", type=Path, default=None, metavar="OUT_DIR",
                        help="where class_report.html goes (default: COURSE_DIR)")
    report.add_argument("--assignment", default=None, metavar="NAME", help="the gradebook's assignment (default: "
                        "attention)")
    report.set_defaults(run=_report)

    gradescope = commands.add_parser("gradescope", help="Gradescope autograder bundle")
    gradescope_actions = gradescope.add_subparsers(dest="action", required=True)
    gradescope_build = gradescope_actions.add_parser("build", help="write the autograder zip to upload to Gradescope")
    gradescope_build.add_argument("out", type=Path, metavar="OUT.zip")
    gradescope_build.add_argument("--lang", choices=("en", "zh"), default=None,
                                  help="feedback language on Gradescope (default: ATTNKIT_LANG there, else English)")
    gradescope_build.set_defaults(run=_gradescope_build)

    student_kit = commands.add_parser("student-kit", help="the student kit")
    student_kit_actions = student_kit.add_subparsers(dest="action", required=True)
    student_kit_build = student_kit_actions.add_parser(
        "build", help="write the installable student kit (public checks as stored vectors, no reference) to OUT_DIR")
    student_kit_build.add_argument("out", type=Path, metavar="OUT_DIR")
    student_kit_build.set_defaults(run=_student_kit_build)
    _course_commands(commands)
    for command in (*commands.choices.values(), gradescope_build, student_kit_build):
        _verbose_option(command, default=argparse.SUPPRESS)  # `attnkit grade -v` as well as `attnkit -v grade`
    for name, command in commands.choices.items():
        command.epilog = help_pages.command_epilog(name)
    return parser


def _course_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    course = commands.add_parser("course", help="an nbgrader course of one's own (docs: instructor/setup)")
    actions = course.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="make the course folder: source, release with the student kit, sandboxed "
                             "nbgrader config, exchange, roster in the gradebook")
    new.add_argument("root", type=Path, metavar="DIR", help="a new or empty folder (a folder holding a course is "
                     "refused)")
    new.add_argument("--roster", type=Path, default=None, metavar="ROSTER.csv",
                     help="students for the gradebook: columns id (required), first_name, last_name, email")
    new.add_argument("--exchange", type=Path, default=None, metavar="EXCHANGE_DIR",
                     help="nbgrader's exchange folder (default DIR/exchange; on a shared machine e.g. "
                          "/srv/nbgrader/exchange)")
    _encoding_option(new)
    new.set_defaults(run=_course_new)
    formgrader = actions.add_parser("formgrader", help="start JupyterLab with nbgrader's formgrader for the course "
                                    "on 127.0.0.1, with a token, and print the URL to open")
    formgrader.add_argument("root", type=Path, metavar="DIR")
    formgrader.add_argument("--port", type=int, default=None, help="the port (default: a free one)")
    formgrader.set_defaults(run=_course_formgrader)
    remove = actions.add_parser("remove-student", help="take a student (e.g. the rehearsal's login) out of the course: "
                                "the gradebook, submitted/, autograded/, feedback/ and the exchange's inbound/; what "
                                "is taken out is kept in DIR/removed/")
    remove.add_argument("root", type=Path, metavar="DIR")
    remove.add_argument("student", metavar="ID", help="the student's id, as in the gradebook and submitted/")
    remove.set_defaults(run=_course_remove_student)
    points = actions.add_parser("points", help="the course's points (DIR/course_settings.toml); with --set, change "
                                "them and regenerate the release with the student kit, keeping manual grades in "
                                "proportion")
    points.add_argument("root", type=Path, metavar="DIR")
    points.add_argument("--set", action="append", default=[], dest="changes", metavar="ID=N",
                        help="give check or exercise ID N points (repeatable: the total stays 100, e.g. --set "
                             "softmax_naive.random=3 --set softmax_stable.large=0)")
    points.set_defaults(run=_course_points)
    release = actions.add_parser("release", help="regenerate the course's release from DIR/course_settings.toml as "
                                 "it is (after an edit by hand), with the student kit")
    release.add_argument("root", type=Path, metavar="DIR")
    release.set_defaults(run=_course_release, changes=[])
    for action in (new, formgrader, remove, points, release):
        _verbose_option(action, default=argparse.SUPPRESS)


def _encoding_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoding", default="utf-8", metavar="NAME",
                        help="the roster's text encoding (default utf-8, with or without a byte-order mark; Excel's "
                             "plain \"CSV\" is cp1252 on a Western-European Windows, gbk on a Chinese one)")


def start_zygote_early() -> None:
    """The grading children's zygote starts its imports now, beside this process's (see isolation/zygote.py)."""
    from autograder.isolation.zygote import ZygoteError, shared_zygote

    try:
        shared_zygote().spawn()
    except ZygoteError:
        pass  # said again, with its reason, when the first child is needed


def _shard_argument(text: str) -> "Shard":
    from autograder.grading.api import shard_argument  # here: --help must not import the checks

    return shard_argument(text)


def _verbose_option(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="also print progress and diagnostics (what each step did) on stderr")


def _limit_options(parser: argparse.ArgumentParser) -> None:
    defaults = Limits()
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="notebooks graded at once (default: one per core)")
    parser.add_argument("--timeout", type=float, default=defaults.timeout,
                        help=f"seconds of its own CPU time per cell and per exercise's checks (default "
                             f"{defaults.timeout:g}; {defaults.wall_factor:g}x this of wall-clock time for code that "
                             f"waits); a notebook gets {defaults.budget_factor:g}x this in all")
    parser.add_argument("--memory", type=int, default=defaults.memory_mb, metavar="MB",
                        help=f"memory a notebook may allocate, in MB (default {defaults.memory_mb})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"check seed (default {DEFAULT_SEED}, "
                        "the one grade() uses in nbgrader)")


def _options(args: argparse.Namespace) -> "Options":
    from autograder.grading.api import Options

    if args.workers < 1 or args.timeout <= 0 or args.memory < 64:
        raise CannotGrade("--workers must be >= 1, --timeout > 0 and --memory >= 64")
    limits = Limits(timeout=args.timeout, memory_mb=args.memory, workers=args.workers)
    return Options(limits=limits, seed=args.seed)


def _check(args: argparse.Namespace) -> int:
    start_zygote_early()
    from autograder.grading.api import check_notebooks

    checked = check_notebooks(args.notebooks, _options(args))
    _print_isolation_notes(checked.isolation_notes)
    if args.json:
        print(json.dumps(clean_data(checked.as_json()), indent=2, ensure_ascii=False))
        return 0
    for line in checked.report_lines():
        print(line)
    return 0


def _course_points_of(settings: Path | None, command: str) -> None:
    """A course folder's own points for this process, where the command works on such a course."""
    if settings is None:
        return
    from autograder.course.course_settings import use_course_settings

    use_course_settings(settings)
    logger.info("attnkit %s: the points of the course in %s (%s)", command, clean(settings.parent), settings.name)


def _grade(args: argparse.Namespace) -> int:
    from autograder.integrations.course_points import submitted_course_settings

    _course_points_of(submitted_course_settings(args.submitted), "grade")
    if args.exercise or args.notebook:
        return _regrade(args)
    start_zygote_early()
    from autograder.grading.api import grade_classroom, mean_score

    summary = grade_classroom(args.submitted, args.out, _options(args), progress_to=sys.stderr, shard=args.shard)
    _print_isolation_notes(summary.isolation_notes)
    shard = f"shard {args.shard}: " if args.shard else ""
    logger.info("attnkit grade: %s%d students (%d graded, %d unchanged since the last run) in %.1f s; mean %.1f; %s",
                shard, len(summary.students), len(summary.graded), len(summary.skipped), summary.seconds,
                mean_score(summary.documents), summary.grades_csv)
    for student_id, problem in sorted(summary.grader_errors.items()):
        logger.error("attnkit grade: %s: %s (every other student was graded)", student_id, problem)
    for problem in summary.problems:
        logger.error("attnkit grade: %s", problem)
    return GRADER_FAILED if summary.grader_errors or summary.problems else 0


def _regrade(args: argparse.Namespace) -> int:
    if args.shard:
        raise CannotGrade("--exercise and --notebook regrade the students of OUT_DIR's own run: leave out --shard")
    from autograder.course.exercises import NOTEBOOKS, of_notebook
    from autograder.grading.api import mean_score, regrade_classroom

    unknown = [name for name in args.notebook if name not in NOTEBOOKS]
    if unknown:
        raise CannotGrade(f"unknown notebook(s) {', '.join(map(repr, unknown))}; the notebooks: {', '.join(NOTEBOOKS)}")
    exercises = [*args.exercise, *(exercise.id for name in args.notebook for exercise in of_notebook(name))]
    start_zygote_early()
    summary = regrade_classroom(args.submitted, args.out, exercises, _options(args), progress_to=sys.stderr)
    _print_isolation_notes(summary.isolation_notes)
    logger.info("attnkit grade: regraded %s (%s) for %d students, the other exercises kept; %d totals changed; "
                "mean %.1f; %s", ", ".join(summary.exercises), ", ".join(summary.notebooks), len(summary.students),
                len(summary.changed), mean_score(summary.documents), summary.grades_csv)
    for student_id, (before, after) in sorted(summary.changed.items()):
        logger.info("attnkit grade: %s: %g -> %g", clean(student_id), before, after)
    return 0


def _points(args: argparse.Namespace) -> int:
    from autograder.course.course_settings import settings_path
    from autograder.course.registry import course_points

    applied = course_points()  # refused here, naming the problem, when the file is wrong
    path = settings_path()
    print(f"course settings: {path if path.is_file() else 'none (' + str(path) + ' absent): the declared points'}")
    _print_points(applied)
    return 0


def _print_points(applied: "AppliedPoints") -> None:
    from autograder.course.exercises import EXERCISES

    checks = [check for declared in applied.declarations for check in declared.checks]
    for exercise in EXERCISES:
        own = [check for check in checks if check.exercise == exercise.id]
        print(f"{exercise.id} ({exercise.notebook}): {exercise.points:g}")
        for check in own:
            print(f"    {check.id}: {check.points:g}{'' if check.hidden else ' (public)'}")
    for note in applied.notes:
        print(f"note: {note}")
    print(f"total: {sum(check.points for check in checks):g}")


def _gradescope_build(args: argparse.Namespace) -> int:
    from autograder.integrations.api import build_gradescope_bundle

    names = build_gradescope_bundle(args.out, lang=args.lang)
    logger.info("attnkit gradescope: %s (%d files): upload it as the assignment's autograder", args.out, len(names))
    return 0


def _student_kit_build(args: argparse.Namespace) -> int:
    from autograder.integrations.api import build_student_kit

    sizes = build_student_kit(args.out)
    logger.info("attnkit student-kit: %s (%d files, %s bytes): install it into the students' kernels with "
                "`pip install %s`", args.out, len(sizes), f"{sum(sizes.values()):,}", args.out)
    return 0


def _merge(args: argparse.Namespace) -> int:
    from autograder.grading.api import mean_score, merge_shards

    summary = merge_shards(args.shards, args.out)
    logger.info("attnkit merge: %d students from %d directories; mean %.1f; %s", len(summary.students),
                len(summary.inputs), mean_score(summary.documents), summary.grades_csv)
    return 0


def _similarity(args: argparse.Namespace) -> int:
    from autograder.integrations.course_points import submitted_course_settings

    _course_points_of(submitted_course_settings(args.submitted), "similarity")
    start_zygote_early()
    from autograder.review.api import find_similar_work

    if args.threshold is not None and not 0.0 < args.threshold <= 1.0:
        raise CannotGrade("--threshold must be in (0, 1]")
    options = _options(args)
    started = time.monotonic()

    def log(line: str) -> None:
        logger.info("attnkit similarity: [%.0f s] %s", time.monotonic() - started, line)

    run = find_similar_work(args.submitted, args.out, base=args.base, grades_dir=args.grades, threshold=args.threshold,
                            options=options, progress_to=sys.stderr, log=log)
    for note in run.analysis.notes:
        log(note)
    log(f"{run.analysis.students} students, {run.analysis.candidates} candidate pairs scored, "
        f"{len(run.analysis.pairs)} flagged in {run.seconds:.1f} s; {run.csv}, {run.html} "
        "(evidence for a human to read, never a verdict)")
    return 0


def _export(args: argparse.Namespace) -> int:
    from autograder.integrations.api import export_grades
    from autograder.integrations.course_points import grades_source_course_settings

    _course_points_of(grades_source_course_settings(args.source), "export")

    lms = "canvas" if args.canvas else "moodle"
    result, link_problem = export_grades(args.source, args.canvas or args.moodle, args.out, lms=lms,
                                         id_column=args.id_column, per_exercise=args.per_exercise,
                                         column=args.column, match=args.match, assignment=args.assignment,
                                         encoding=args.encoding)
    for student_id, note in result.notes:
        logger.warning("attnkit export: %s%s", clean(student_id) + ": " if student_id else "", clean(note))
    if link_problem:
        logger.warning("attnkit export: %s", link_problem)
    logger.info("attnkit export: %s roster students written (matched on %s), column \"%s\"; %d without a "
                "submission got 0, %d roster rows left out (their LMS grades stay), %d graded students not in the "
                "roster; %s (notes: %s)", result.rows, result.matched_on, clean(result.column),
                len(result.without_submission), len(result.left_out), len(result.not_in_roster), result.path,
                result.notes_path)
    return GRADER_FAILED if result.not_in_roster else 0  # exit 1: a graded student is missing from the roster


def _report(args: argparse.Namespace) -> int:
    from autograder.integrations.api import report_from_gradebook

    made = report_from_gradebook(args.course, args.out, args.assignment)
    logger.info("attnkit report: %d students (%d graded, %d without a submission, %d handed in but not autograded, "
                "%d late); totals from the gradebook; %s", made.students, made.submitted,
                len(made.without_submission), len(made.not_autograded), len(made.late), made.path)
    if made.without_record:
        logger.warning("attnkit report: mistakes not shown for %d notebooks without attnkit's record (autograded "
                       "before attnkit kept one, in the student's kernel, or graded again since): %s",
                       len(made.without_record), clean(", ".join(made.without_record[:10]), 400))
    return 0


def _course_new(args: argparse.Namespace) -> int:
    from autograder.integrations.api import new_course

    made = new_course(args.root, roster=args.roster, exchange=args.exchange, encoding=args.encoding)
    print(f"attnkit course new: {made.root}: {len(made.students)} students in the gradebook; the release with the "
          f"student kit in {made.release}; the exchange {made.exchange}")
    print(f"next: cd {made.root} && nbgrader release_assignment attention; "
          f"attnkit course formgrader {made.root} opens formgrader")
    return 0


def _course_formgrader(args: argparse.Namespace) -> int:
    from autograder.integrations.api import serve_formgrader

    def say(line: str) -> None:
        print(line, flush=True)

    return serve_formgrader(args.root, args.port, say)


def _course_remove_student(args: argparse.Namespace) -> int:
    from autograder.integrations.api import remove_student

    removed = remove_student(args.root, args.student)
    taken = ([f"the gradebook ({removed.submissions} submission{'s' if removed.submissions != 1 else ''} and "
              "their grades)"] if removed.in_gradebook else []) + [clean(item) for item in removed.moved]
    print(f"attnkit course remove-student: {clean(removed.student_id)} taken out of {args.root}: {', '.join(taken)}; "
          f"kept in {removed.kept_in}")
    for note in removed.notes:
        logger.warning("attnkit course remove-student: %s", note)
    return 0


def _course_points(args: argparse.Namespace) -> int:
    if args.changes:
        return _course_release(args)
    from autograder.integrations.course_points import course_points

    path, applied = course_points(args.root)
    print(f"course settings: {clean(path)}")
    _print_points(applied)
    return 0


def _course_release(args: argparse.Namespace) -> int:
    from autograder.integrations.api import release_course

    made = release_course(args.root, args.changes)
    for (notebook, cell), (before, after) in sorted(made.changed.items()):
        print(f"{clean(notebook)} {clean(cell)}: {before:g} -> {after:g} points")
    for grade in made.rescaled:
        print(grade)
    for note in made.applied.notes:
        print(f"note: {note}")
    print(f"attnkit course points: {made.settings}: {len(made.changed)} graded cells changed, "
          f"{len(made.rescaled)} manual grades kept in proportion or flagged; the release with the student kit in "
          f"{made.release}")
    print(f"next: cd {made.root} && nbgrader release_assignment attention --force (students who fetch it get the new "
          "points); nbgrader autograde attention --force grades every submission out of them; a formgrader started "
          "before this command is started again")
    return 0


def _print_isolation_notes(notes: Sequence[str]) -> None:
    for note in notes:
        logger.warning("attnkit: isolation: %s", note)


if __name__ == "__main__":
    run()
