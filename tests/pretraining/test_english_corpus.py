"""The English corpus: CPython's prose, extracted once, committed, under the PSF licence."""

import hashlib
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from geron_lib.pretraining import corpus
from geron_lib.pretraining.tokenizer import split_words

ROOT = Path(__file__).resolve().parents[2]
SHA256 = "081da606ee76963b4dae6671b38c8caa99092af2b6003413c7475ea271e261c7"
LINES = corpus.load("english")

# What code looks like in Python's docs: a prompt, a grammar rule, a definition, an assignment, a call,
# markup, or a line that does not read as a sentence
CODE = re.compile(r">>>|::=|\bdef |\bclass \w+\(|\w+ = |\w\(\)|`|\bimport \w+\.\w|[{}\[\]\\_@#$%^&|~<>/=]")


def test_file_is_the_recorded_one_and_small():
    data = corpus.ENGLISH_PATH.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256
    assert len(data) < 1_000_000
    assert len(LINES) == 5033 and len(set(LINES)) == len(LINES)  # every paragraph once
    assert sum(len(split_words(line)) for line in LINES) > 100_000


def test_every_line_is_prose_not_code():
    assert all(line.isascii() and line == line.strip() and line for line in LINES)
    assert not [line for line in LINES if CODE.search(line)]
    assert all(line[0].isupper() and line.endswith(".") for line in LINES)
    words = [len(s.split()) for line in LINES for s in re.split(r"(?<=\.) (?=[A-Z])", line)]
    assert min(words) >= 6
    # ... and the filter is not vacuous: the sources it read hold code that it left out
    import pydoc_data.topics
    assert "::=" in pydoc_data.topics.topics["if"] and ">>>" in pydoc_data.topics.topics["typesseq"]


def test_licence_file_is_the_psf_agreement_with_its_notice():
    text = corpus.PSF_LICENSE_PATH.read_text(encoding="utf-8")
    assert text.startswith("PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2")
    assert "Python Software Foundation;\nAll Rights Reserved" in text
    readme = (corpus.ENGLISH_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert "Python Software Foundation; All Rights Reserved" in readme.replace("\n", " ")
    assert SHA256 in readme and corpus.CORPUS_PYTHON in readme


def test_load_names_the_corpora():
    assert corpus.load() == corpus.load("grammar") != LINES
    with pytest.raises(ValueError, match="name must be one of 'grammar', 'english'"):
        corpus.load("wikipedia")


@pytest.mark.skipif(platform.python_version() != corpus.CORPUS_PYTHON,
                    reason=f"the committed corpus was made from Python {corpus.CORPUS_PYTHON}'s sources")
@pytest.mark.slow
def test_script_writes_the_committed_bytes(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_english_corpus.py"), str(tmp_path)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert "wrote 5,033 paragraphs" in out.stdout
    assert (tmp_path / "english.txt").read_bytes() == corpus.ENGLISH_PATH.read_bytes()
    assert (tmp_path / "PSF-LICENSE.txt").read_bytes() == corpus.PSF_LICENSE_PATH.read_bytes()
