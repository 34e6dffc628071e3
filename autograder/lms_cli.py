"""The `attnkit export` command line: the LMS file written (autograder.lms), notes on stderr, the report linked."""

import sys

from autograder.lms import LmsError, export
from autograder.report_links import add_link
from autograder.safe_text import clean


def export_command(args, usage_error, attention_status):
    """Run `attnkit export` for parsed `args`. `usage_error`: the CLI's exit-2 exception; returns
    `attention_status` when a graded student is not in the roster (written to the notes), else 0."""
    if args.moodle is not None and args.id_column is None:
        raise usage_error("--moodle needs --id-column email, username or idnumber")
    lms = "canvas" if args.canvas else "moodle"
    try:
        result = export(args.grades, args.canvas or args.moodle, args.out, lms=lms, id_column=args.id_column,
                        per_exercise=args.per_exercise, column=args.column, match=args.match)
    except LmsError as problem:
        raise usage_error(str(problem)) from None
    for student_id, note in result.notes:
        print(f"attnkit export: {clean(student_id) + ': ' if student_id else ''}{clean(note)}", file=sys.stderr)
    try:
        add_link(args.grades, f"{lms.capitalize()} import file ({args.out.name})", result.path)
    except OSError as error:  # the file is written; only the report's link is missing
        print(f"attnkit export: class_report.html not updated with a link to {result.path}: {error}",
              file=sys.stderr)
    print(f"attnkit export: {result.rows} roster students (matched on {result.matched_on}), column "
          f"\"{clean(result.column)}\"; {len(result.without_submission)} without a submission got 0, "
          f"{len(result.not_in_roster)} graded students not in the roster; {result.path} (notes: {result.notes_path})",
          file=sys.stderr)
    return attention_status if result.not_in_roster else 0
