"""Write the book's English corpus, geron_lib/pretraining/data/english.txt, from the prose CPython ships.

Two sources, both in every CPython install and under the PSF License Version 2:
  1. the interactive help topics, ``pydoc_data.topics`` (the language reference's text, sorted by topic);
  2. the docstrings (module, class, function) of the standard library's pure-Python modules, file by file
     in path order, skipping the test suite, IDLE, lib2to3, tkinter, turtledemo, ensurepip, pydoc_data and
     site-packages, and every file that carries a copyright or licence notice other than the PSF's (code
     contributed under its own licence, such as logging, multiprocessing or ElementTree).

The text is cut into blocks at blank lines; a block is kept only if it reads as a prose paragraph (not a
heading, a table, a grammar rule or code: every line at one indentation, or a bullet point). Footnote marks
and emphasis asterisks are removed; an inline literal ("if") keeps its word and loses its quotes, and a
sentence with any other literal (an expression, a signature) is dropped. A sentence is kept when it is
plain English: a capital first, a full stop last, 6 to 60 words, at least 90 % of them plain words, ASCII
only, no call such as read() and no character that only code uses (= < > { } [ ] \\ @ # $ % ^ & | ~ ` _ /).
Each line of the output is one paragraph's kept sentences; a paragraph seen before is skipped.

The output depends on the Python version (its help topics and standard library): the committed file was
made with the Python named in CORPUS_PYTHON (geron_lib/pretraining/corpus.py). The script also writes the
PSF licence agreement of the running Python beside the corpus (PSF-LICENSE.txt), as the licence requires.

Run from the repository root:  .venv/bin/python scripts/make_english_corpus.py [OUTPUT_DIR]
"""

import ast
import platform
import pydoc_data.topics
import re
import sys
import sysconfig
from pathlib import Path

from geron_lib.pretraining.corpus import CORPUS_PYTHON, ENGLISH_PATH, PSF_LICENSE_PATH

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIPPED = {"test", "idlelib", "lib2to3", "tkinter", "turtledemo", "ensurepip", "pydoc_data", "site-packages"}
NOTICE = re.compile(r"copyright|\(c\) \d|all rights reserved|spdx-license|permission to use", re.IGNORECASE)
PSF = re.compile(r"Python Software Foundation|\bPSF\b")

UNDERLINE = re.compile(r"[*=\-^~#\"']{3,}")
BULLET = re.compile(r"^(?:[*-]|\d+\.) ")
SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
PLAIN_WORD = re.compile(r"[A-Za-z][a-z'\-]*|[A-Z]+s?|[0-9]+")
CODE_CHARACTER = re.compile(r"[=<>{}\[\]\\@#$%^&|~`_/]")
TYPOGRAPHIC = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": " - "})
DROP = "\x00"  # marks a sentence holding a literal that is not a plain word


def paragraphs(text: str):
    """Every block of ``text`` (blank-line separated) that reads as a prose paragraph, joined to one line."""
    for block in re.split(r"\n[ \t]*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines or (len(lines) > 1 and UNDERLINE.fullmatch(lines[1].strip())):
            continue                                              # empty, or a heading
        if any(line.lstrip().startswith(("+", "|", "===", ">>>", "...")) for line in lines):
            continue                                              # a table or an interactive session
        first, rest = lines[0].lstrip(), lines[1:]
        if BULLET.match(first):                                   # a bullet point: its text, continued
            first = BULLET.sub("", first)
            if len({len(line) - len(line.lstrip()) for line in rest}) > 1:
                continue
        elif len({len(line) - len(line.lstrip()) for line in lines}) > 1:
            continue                                              # code, a grammar rule, a nested block
        yield " ".join([first, *(line.strip() for line in rest)])


def _literal(match: re.Match) -> str:
    return match.group(1) if re.fullmatch(r"[A-Za-z]+", match.group(1)) else DROP


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences, markup removed, that read as plain English."""
    text = re.sub(r"\[\d+\]", "", paragraph)                            # footnote marks
    text = re.sub(r"(?<!\w)\*{1,2}(\w[^*]*?)\*{1,2}(?!\w)", r"\1", text)  # *emphasis*, **strong**
    text = re.sub(r'"([^"]*)"', _literal, text)                         # "literal"
    text = re.sub(r"\s+", " ", text.translate(TYPOGRAPHIC)).strip()
    return [s for s in SENTENCE_END.split(text) if plain_english(s)]


def plain_english(sentence: str) -> bool:
    if DROP in sentence or "()" in sentence or not sentence.isascii() or CODE_CHARACTER.search(sentence):
        return False
    if not sentence[0].isupper() or not sentence.endswith("."):
        return False
    words = [w.strip(",;:()\"'") for w in sentence[:-1].split()]
    plain = sum(bool(PLAIN_WORD.fullmatch(w)) for w in words)
    return 6 <= len(words) <= 60 and plain >= 0.9 * len(words)


def help_topics() -> list[str]:
    return [pydoc_data.topics.topics[key] for key in sorted(pydoc_data.topics.topics)]


def has_other_notice(source: str) -> bool:
    """True when a line of ``source`` carries a copyright or licence notice that is not the PSF's."""
    return any(NOTICE.search(line) and not PSF.search(line) for line in source.splitlines())


def docstrings() -> list[str]:
    """The docstrings of the standard library's pure-Python modules (see the module docstring), in order."""
    out = []
    for path in sorted(STDLIB.rglob("*.py")):
        parts = path.relative_to(STDLIB).parts
        if set(parts) & SKIPPED or parts[0].startswith("config-"):
            continue
        source = path.read_text(encoding="utf-8")
        if has_other_notice(source):
            continue
        nodes = [n for n in ast.walk(ast.parse(source))
                 if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
        nodes.sort(key=lambda n: getattr(n, "lineno", 0))                   # the module first, then in order
        out += [doc for n in nodes if (doc := ast.get_docstring(n))]
    return out


def english_lines() -> list[str]:
    """One line per kept paragraph, in source order, each paragraph once."""
    lines = {}
    for text in help_topics() + docstrings():
        for paragraph in paragraphs(text):
            if kept := sentences(paragraph):
                lines.setdefault(" ".join(kept), None)
    return list(lines)


def psf_license() -> str:
    """The PSF License Agreement, as the running Python's LICENSE.txt states it."""
    text = (STDLIB / "LICENSE.txt").read_text(encoding="utf-8")
    start = text.index("PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2")
    return text[start:text.index("BEOPEN.COM LICENSE AGREEMENT")].rstrip() + "\n"


def main(out_dir: Path | None = None) -> None:
    if platform.python_version() != CORPUS_PYTHON:
        print(f"warning: the committed corpus was made with Python {CORPUS_PYTHON}; this is "
              f"{platform.python_version()}, so the text will differ", file=sys.stderr)
    corpus_path = ENGLISH_PATH if out_dir is None else out_dir / ENGLISH_PATH.name
    license_path = PSF_LICENSE_PATH if out_dir is None else out_dir / PSF_LICENSE_PATH.name
    lines = english_lines()
    corpus_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    license_path.write_text(psf_license(), encoding="utf-8")
    print(f"wrote {len(lines):,} paragraphs, {corpus_path.stat().st_size:,} bytes, to {corpus_path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
