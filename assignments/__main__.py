"""Student notebooks and otter autograders from the book's exercises, and grading: ``geron-assignments
make|grade``, or ``python -m assignments make|grade`` (``make assignments`` runs ``geron-assignments make``).

``make`` reads ``assignments/spec.yml`` and the chapters under ``book/``, and needs the built book (``make
book``: the exercises' ``{eval}`` numbers are the ones it shows). Each exercise is found by its label and
shown as the book prints it, without its solution; the exercises the spec lists become graded questions,
every other one a written question, answered in Markdown and not scored. ``otter assign`` runs the tests
against the solutions unless ``--no-run-tests`` is given; the hidden tests are the solutions' values.
``grade`` grades submissions (``assignments.grading``: each alone, in the sandbox, with time limits, against
the hidden tests) and writes ``grades/`` beside the chapter's autograder. Its exit status is 0 when every
submission ran to its end and was scored in time, 1 when one could not be read, crashed or ran past a time
limit (its row says why; the others are graded all the same), 2 for a usage error or when grading refuses
to start (the sandbox cannot be had, the hidden tests changed, two submissions share a name).

With ``--roster roster.csv`` (``assignments.roster``: a column ``student_id``), ``make`` also writes a
notebook per student with their own numbers (``assignments.students``), and ``grade`` grades each submission
against its student's numbers, telling whose it is from its metadata or its file name. A roster that cannot
be used (missing, empty, no ``student_id`` column, an id listed twice or unfit for a file name) exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from geron_lib.validate import check_positive_number

from . import OUT, GradingRefused
from .grading import CELL_TIMEOUT, SUBMISSION_TIMEOUT, grade
from .master import hidden_tests, make
from .myst import chapters_with_exercises
from .roster import ID_COLUMN, RosterError, read_roster
from .spec import load_spec
from .students import make_students


def _seconds(text: str) -> float:
    """A time limit's argument: a positive finite number of seconds."""
    try:
        return check_positive_number("a time limit", float(text))
    except ValueError:
        message = f"must be a positive finite number of seconds, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def main(argv: list[str] | None = None) -> int:
    # named as it was started: geron-assignments, or python -m assignments (whose argv[0] is this file)
    prog = "python -m assignments" if Path(sys.argv[0]).name == "__main__.py" else None
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("make", help="student notebooks and autograders (make assignments; after "
                                              "make book)")
    making.add_argument("chapters", nargs="*", help="chapter names (default: every chapter with exercises)")
    making.add_argument("--out", type=Path, default=OUT)
    making.add_argument("--no-run-tests", action="store_true", help="skip checking the solutions with otter")
    roster = (f"a CSV file with a header row and a column {ID_COLUMN}, one student a row (other columns are "
              "ignored)")
    making.add_argument("--roster", type=Path,
                        help=f"also a notebook per student, with their own numbers: {roster}")
    grading = commands.add_parser("grade", help="grade submissions, each in a fresh kernel in a sandbox "
                                                "(bubblewrap), against the hidden tests; exit 1 when one "
                                                "could not be fully graded (its row in grades.csv says why)")
    grading.add_argument("chapter")
    grading.add_argument("submissions", nargs="+", type=Path)
    grading.add_argument("--out", type=Path, default=OUT)
    grading.add_argument("--cell-timeout", type=_seconds, default=CELL_TIMEOUT,
                         help=f"seconds a cell may run before it is interrupted (default {CELL_TIMEOUT})")
    grading.add_argument("--timeout", type=_seconds, default=SUBMISSION_TIMEOUT,
                         help=f"seconds a submission may take before it is stopped with zeros (default "
                              f"{SUBMISSION_TIMEOUT})")
    grading.add_argument("--roster", type=Path, help=f"grade each student against their own numbers (the "
                                                     f"roster make was given): {roster}")
    grading.add_argument("--unsafe", action="store_true",
                         help="run the submissions without the sandbox, with your rights (where bubblewrap "
                              "cannot run: grade as a user, in an account or container, that may run them)")
    args = parser.parse_args(argv)
    try:
        students = None if args.roster is None else read_roster(args.roster)
    except RosterError as err:
        parser.error(str(err))

    if args.command == "make":
        spec = load_spec()
        for chapter in args.chapters or chapters_with_exercises():
            graded = spec.get(chapter, [])
            zipped = make(chapter, graded, args.out, run_tests=not args.no_run_tests)
            print(f"{chapter}: {args.out / chapter / 'student' / (chapter + '.ipynb')}, {zipped}")
            if students is not None:
                made, shared = make_students(chapter, graded, args.out, hidden_tests(chapter, args.out),
                                             students)
                print(f"{chapter}: {len(made)} student notebooks under {args.out / chapter / 'students'}")
                for note in shared:
                    print(f"{chapter}: note: {note}", file=sys.stderr)
        return 0
    hidden = hidden_tests(args.chapter, args.out)
    if not hidden.is_file():
        parser.error(f"no hidden tests at {hidden}: run `make assignments` first")
    try:
        rows = grade(hidden, args.submissions, args.out / args.chapter / "grades",
                     cell_timeout=args.cell_timeout, timeout=args.timeout, unsafe=args.unsafe,
                     roster=students)
    except GradingRefused as err:
        parser.error(str(err))
    for row in rows:
        print(f"{row['submission']}{' (' + row['student'] + ')' if 'student' in row else ''}: "
              f"{row['total']:g} / {row['possible']:g}" + (f" ({row['reason']})" if row["reason"] else ""))
    print(f"grades and feedback: {args.out / args.chapter / 'grades'}")
    return 1 if any(row["reason"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
