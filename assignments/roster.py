"""The class roster (``geron-assignments make|grade --roster roster.csv``) and which student a submission is.

A roster is a CSV file (UTF-8) whose header row has a column ``student_id`` (ID_COLUMN), one student a row;
other columns (names, e-mail addresses) are ignored. An id names the student's folder and files, so it is
1 to 64 letters, digits, ``.``, ``_`` or ``-``, starting with a letter or a digit; no id may be listed twice.

A submission is the student's whose id its notebook's metadata holds (``make`` writes it there:
METADATA_KEY, with the chapter), or, when the notebook holds none (or cannot be read), the student whose id is
its file name (``<id>.ipynb``). Grading refuses to start when it cannot tell whose a submission is, when it
is another chapter's, when its metadata and its file name name two different students, or when two
submissions are one student's.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from . import GradingRefused

#: The roster's column of student ids
ID_COLUMN = "student_id"
#: What a student id may be (it names the student's folder and files)
STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: The key of a student notebook's metadata that says whose it is: {"chapter": ..., "student": ...}
METADATA_KEY = "geron_assignments"


class RosterError(ValueError):
    """A roster that cannot be used: the message names the file and the rule it breaks."""


def read_roster(path: Path) -> list[str]:
    """The student ids of the roster at ``path``, in its order; RosterError naming the file and the rule when
    it is missing, unreadable, empty, has no ``student_id`` column, or lists an id that is empty, not a file
    name, or listed twice."""
    where = f"the roster {path}"
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
        rows = list(csv.reader(io.StringIO(text)))
    except FileNotFoundError:
        raise RosterError(f"{where} does not exist") from None
    except OSError as err:
        raise RosterError(f"{where} cannot be read ({err.strerror})") from None
    except UnicodeDecodeError:
        raise RosterError(f"{where} is not UTF-8 text: save it as a UTF-8 CSV file") from None
    except csv.Error as err:
        raise RosterError(f"{where} is not a CSV file ({err})") from None
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise RosterError(f"{where} is empty: it needs a header row with a column {ID_COLUMN!r} and a row "
                          "per student")
    header = [cell.strip() for cell in rows[0]]
    if ID_COLUMN not in header:
        raise RosterError(f"{where} has no column {ID_COLUMN!r} in its header row (it has {header})")
    column, ids = header.index(ID_COLUMN), []
    for line, row in enumerate(rows[1:], start=2):
        student = row[column].strip() if column < len(row) else ""
        if not STUDENT_ID.fullmatch(student):
            raise RosterError(f"{where}, row {line}: the student id {student!r} must be 1 to 64 letters, "
                              "digits, '.', '_' or '-', starting with a letter or a digit (it names the "
                              "student's files)")
        ids.append(student)
    if not ids:
        raise RosterError(f"{where} lists no student: a row per student goes below its header row")
    if twice := sorted({s for s in ids if ids.count(s) > 1}):
        raise RosterError(f"{where} lists the student ids {twice} more than once: each student once")
    return ids


def _claimed(submission: Path) -> dict:
    """The METADATA_KEY record of the submission's notebook ({} when it holds none or cannot be read)."""
    try:
        record = json.loads(submission.read_bytes()).get("metadata", {}).get(METADATA_KEY, {})
    except (OSError, ValueError, AttributeError):
        return {}
    return record if isinstance(record, dict) else {}


def identify(submissions: list[Path], roster: list[str] | None, chapter: str) -> dict[Path, str]:
    """{submission: its student's id} by the roster (the module docstring); {} without a roster, when no
    submission is a student's own notebook. GradingRefused, naming the submissions, otherwise."""
    claims = {s: _claimed(s) for s in submissions}
    if roster is None:
        if owned := [s.name for s, c in claims.items() if "student" in c]:
            raise GradingRefused(f"the submissions {owned} are students' own notebooks (made with --roster, "
                                 "with their own numbers): grade them with --roster")
        return {}
    known, who, problems = set(roster), {}, []
    for submission, claim in claims.items():
        student, named = claim.get("student"), submission.stem if submission.stem in known else None
        if claim.get("chapter", chapter) != chapter:
            problems.append(f"{submission.name} is chapter {claim['chapter']}'s notebook, not {chapter}'s")
        elif student is not None and (not isinstance(student, str) or student not in known):
            problems.append(f"{submission.name} is the notebook of student {student!r}, who is not on the "
                            "roster")
        elif student is not None and named is not None and named != student:
            problems.append(f"{submission.name} is named for student {named!r} but is the notebook of "
                            f"student {student!r}")
        elif student is None and named is None:
            problems.append(f"{submission.name} holds no student id in its metadata, and its name is no "
                            "student id of the roster (name it <student_id>.ipynb)")
        else:
            who[submission] = student or named
    students = list(who.values())
    problems += [f"{[s.name for s in who if who[s] == student]} are all the notebook of student {student!r}"
                 for student in sorted({s for s in students if students.count(s) > 1})]
    if problems:
        raise GradingRefused("cannot tell whose each submission is: " + "; ".join(problems))
    return who
