"""Student notebooks and otter autograders from the book's exercises, and grading: ``python -m assignments
make|grade`` (``make assignments`` runs ``make``).

``make`` reads ``assignments/spec.yml`` and the chapters under ``book/``, and needs the built book (``make
book``: the exercises' ``{eval}`` numbers are the ones it shows). Each exercise is found by its label and
shown as the book prints it, without its solution; the exercises the spec lists become graded questions,
every other one a written question, answered in Markdown and not scored. ``otter assign`` runs the tests
against the solutions unless ``--no-run-tests`` is given. ``grade`` grades submissions and writes
``grades/`` beside the chapter's autograder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import OUT
from .grading import grade
from .master import make
from .myst import chapters_with_exercises
from .spec import load_spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m assignments", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("make", help="student notebooks and autograders (make assignments; after "
                                              "make book)")
    making.add_argument("chapters", nargs="*", help="chapter names (default: every chapter with exercises)")
    making.add_argument("--out", type=Path, default=OUT)
    making.add_argument("--no-run-tests", action="store_true", help="skip checking the solutions with otter")
    grading = commands.add_parser("grade", help="grade submissions without containers")
    grading.add_argument("chapter")
    grading.add_argument("submissions", nargs="+", type=Path)
    grading.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    if args.command == "make":
        spec = load_spec()
        for chapter in args.chapters or chapters_with_exercises():
            zipped = make(chapter, spec.get(chapter, []), args.out, run_tests=not args.no_run_tests)
            print(f"{chapter}: {args.out / chapter / 'student' / (chapter + '.ipynb')}, {zipped}")
        return 0
    autograder = args.out / args.chapter / "autograder" / f"{args.chapter}-autograder.zip"
    if not autograder.is_file():
        parser.error(f"no autograder at {autograder}: run `make assignments` first")
    for row in grade(autograder, args.submissions, args.out / args.chapter / "grades"):
        print(f"{row['submission']}: {row['total']:g} / {row['possible']:g}")
    print(f"grades and feedback: {args.out / args.chapter / 'grades'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
