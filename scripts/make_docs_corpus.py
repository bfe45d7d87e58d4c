"""Write the book's large English corpus, geron_lib/pretraining/data/python_docs.tsv.gz, from the
reStructuredText sources of Python 3.11's documentation as Debian's python3.11-doc package ships them.

Source: /usr/share/doc/python3.11/html/_sources (497 files, PSF License Version 2); install it with
``apt-get install python3.11-doc``. The committed file was made from the package version named in
DOCS_PACKAGE (geron_lib/pretraining/corpus.py). Every file is read in path order, cut into blocks at blank
lines, and a block is kept when it can be prose (see ``blocks``): not a heading, a directive line, a
comment, a label, a field, a table, an interactive session or a definition list, and not inside the code
that a paragraph ending in "::" or a code directive introduces. A bullet point keeps its text. Its markup
is then rendered as a reader sees it:

- a role, :func:`open` or :class:`~io.TextIOBase`, becomes its text as Sphinx shows it (a ``~`` keeps the
  last dotted name, ``title <target>`` keeps the title), :pep:`8` becomes PEP 8, :rfc:`2822` RFC 2822;
- an inline literal, ``None``, and a hyperlink, `text <url>`_ or `text`_, become their text;
- emphasis asterisks and footnote marks are removed; typographic quotes and dashes become ASCII.

A sentence is kept when it reads as English (see ``sentences``): a capital first; a full stop, colon,
question or exclamation mark or closing bracket last; 4 to 80 words; ASCII; no markup left; at least 80 %
of its words plain words or names of code. Each output line is ``section<TAB>document<TAB>paragraph``, a
paragraph's kept sentences: the section is the documentation's top folder (tutorial, library, reference,
howto, c-api, faq, whatsnew, ...; a file at the top is "top"), the document the file's path without
``.rst.txt``. A paragraph seen before is skipped. The file is gzip-compressed with no name and time stamp in
its header, so its bytes depend on the text only.

Run from the repository root:  .venv/bin/python scripts/make_docs_corpus.py [SOURCES_DIR] [OUTPUT]
"""

import gzip
import re
import sys
from pathlib import Path

from make_english_corpus import DROP, PLAIN_WORD, SENTENCE_END, TYPOGRAPHIC

from geron_lib.pretraining.corpus import DOCS_PATH

SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
HEADING_LINE = re.compile(r"([!-/:-@\[-`{-~])\1{2,}")
ROLE = re.compile(r":(\w+(?:[:-]\w+)*):`([^`]+)`")
LITERAL = re.compile(r"``([^`]+)``")
LINK = re.compile(r"`([^`<]+?)\s*(?:<[^>]*>)?`__?")
#: A word that names code, such as None, os.path or str.join() (counted as plain).
NAME = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?")
MARKUP = re.compile(r"[`|<>{}\\@$^~]|\*\*|::")


def _role(match: re.Match) -> str:
    role, text = match.group(1), match.group(2).strip()
    if role in ("pep", "rfc"):
        return f"{role.upper()} {text}" if text.isdigit() else DROP
    text = re.sub(r"\s*<[^>]*>$", "", text)          # title <target>: the title
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]            # ~a.b.c shows as c
    text = text.lstrip("!")
    return text


def rendered(block: str) -> str:
    """A prose block's reST markup as a reader sees it (see the module docstring)."""
    block = ROLE.sub(_role, block)
    block = LITERAL.sub(lambda m: m.group(1), block)
    block = LINK.sub(lambda m: m.group(1), block)
    return block.replace("\\ ", "")


CODE_DIRECTIVE = re.compile(r"\.\. (?:code-block|sourcecode|code|doctest|testcode|testoutput|testsetup|"
                            r"productionlist|highlight|literalinclude)::")
BULLET = re.compile(r"^(?:[*-]|\d+\.|#\.) ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(text: str):
    """The blank-line separated blocks of a reST file that can be prose, each joined to one line: not a
    heading, directive line, comment, label, field, table or interactive session, and not the code that a
    paragraph ending in "::" or a code directive introduces (every block indented deeper than it)."""
    code_indent = None
    for block in re.split(r"\n[ \t]*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        indent, first = _indent(lines[0]), lines[0].lstrip()
        if code_indent is not None and indent > code_indent:
            continue                                   # inside a code block
        code_indent = None
        if CODE_DIRECTIVE.match(first) or lines[-1].rstrip().endswith("::") and not first.startswith(".."):
            code_indent = indent
        if any(HEADING_LINE.fullmatch(line.strip()) for line in lines):
            continue
        if first.startswith(("..", ":", "+", "|", ">>>", "...", "$")):
            continue
        if BULLET.match(first):
            first = BULLET.sub("", first)
        elif len({_indent(line) for line in lines}) > 1:
            continue                                   # a definition list, a nested block
        text_lines = [first, *(line.strip() for line in lines[1:])]
        if text_lines[-1].endswith("::"):
            text_lines[-1] = text_lines[-1][:-1]       # "as follows::" introduces code: one colon shown
        yield " ".join(text_lines)


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences, its markup rendered, that read as English: a capital first, a full stop
    last, 4 to 80 words, ASCII, no markup left (no backtick, bar, angle or curly bracket, backslash), and at
    least 80 % of the words plain words or names."""
    text = re.sub(r"\[#?\d*\]_", "", rendered(paragraph))                   # footnote marks
    text = re.sub(r"(?<!\w)\*{1,2}(\w[^*]*?)\*{1,2}(?!\w)", r"\1", text)   # *emphasis*, **strong**
    text = re.sub(r"\s+", " ", text.translate(TYPOGRAPHIC)).strip()
    return [s for s in SENTENCE_END.split(text) if _english(s)]


def _english(sentence: str) -> bool:
    if DROP in sentence or not sentence.isascii() or MARKUP.search(sentence):
        return False
    if not sentence[0].isupper() or not sentence.endswith((".", ":", "?", "!", ")")):
        return False
    words = [w.strip(",;:()\"'") for w in sentence[:-1].split()]
    plain = sum(bool(PLAIN_WORD.fullmatch(w) or NAME.fullmatch(w)) for w in words)
    return 4 <= len(words) <= 80 and plain >= 0.8 * len(words)


def corpus_lines(sources: Path = SOURCES) -> list[str]:
    """``section<TAB>document<TAB>paragraph`` per kept paragraph, in path order, each paragraph once."""
    if not sources.is_dir():
        sys.exit(f"no documentation sources at {sources}: apt-get install python3.11-doc")
    seen, lines = set(), []
    for path in sorted(sources.rglob("*.rst.txt")):
        document = str(path.relative_to(sources))[: -len(".rst.txt")]
        section = document.split("/")[0] if "/" in document else "top"
        for block in blocks(path.read_text(encoding="utf-8")):
            kept = sentences(block)
            paragraph = " ".join(kept)
            if kept and paragraph not in seen:
                seen.add(paragraph)
                lines.append(f"{section}\t{document}\t{paragraph}")
    return lines


def main(sources: Path = SOURCES, output: Path = DOCS_PATH) -> None:
    lines = corpus_lines(sources)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    output.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    words = sum(len(line.split("\t")[2].split()) for line in lines)
    print(f"wrote {len(lines):,} paragraphs, {words:,} words, {len(data):,} bytes "
          f"({output.stat().st_size:,} compressed) to {output}")


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:3]))
