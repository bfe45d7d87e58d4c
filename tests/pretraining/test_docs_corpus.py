"""The documentation corpus: Python 3.11's reST sources as Debian ships them, cleaned once, committed
(gzip) under the PSF licence; and the context grid's split of it, whose held-out paragraphs neither the
tokenizer nor training saw."""

import gzip
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from geron_lib.pretraining import corpus
from geron_lib.pretraining.subword import WordPieceTokenizer
from geron_lib.studies import context_grid as cg
from geron_lib.studies import tradeoffs as tx

ROOT = Path(__file__).resolve().parents[2]
SHA256 = "5fbf0cc5be48a5bd7d4f291cca03587dbec763d5fa8ff2258f0653831fca9af8"
SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
ROWS = corpus.docs_paragraphs()
MARKUP = re.compile(r"`|::|^\.\. |\*\*|:(?:func|class|meth|mod|ref|term|attr|data|exc):")


def test_file_is_the_recorded_one():
    data = corpus.DOCS_PATH.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256
    assert len(data) < 2_000_000                      # compressed
    assert gzip.decompress(data).decode("utf-8").count("\n") == len(ROWS)
    readme = (corpus.DOCS_PATH.parent / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    assert SHA256 in readme and corpus.DOCS_PACKAGE.split()[1] in readme
    assert f"{len(ROWS):,} paragraphs" in readme


def test_rows_are_section_document_paragraph():
    assert all(len(row) == 3 for row in ROWS)
    paragraphs = [p for _, _, p in ROWS]
    assert len(set(paragraphs)) == len(paragraphs)    # every paragraph once
    assert corpus.load("docs") == paragraphs
    for section, document, _ in ROWS:
        assert section == (document.split("/")[0] if "/" in document else "top")
    sections = {s for s, _, _ in ROWS}
    assert {"library", "reference", "tutorial", "howto", "c-api", "whatsnew", "faq"} <= sections


def test_paragraphs_are_english_with_the_markup_rendered():
    paragraphs = [p for _, _, p in ROWS]
    assert all(p.isascii() and p == p.strip() and p[0].isupper() for p in paragraphs)
    assert not [p for p in paragraphs if MARKUP.search(p)]
    assert sum(len(p.split()) for p in paragraphs) > 800_000


@pytest.mark.slow
def test_held_out_paragraphs_unseen_by_tokenizer_and_training():
    setup = cg.Grid().base
    d = tx.data(setup)
    paragraphs = corpus.load("docs")
    train, held = corpus.split(paragraphs, setup.n_held_out, seed=0)
    task_text = {paragraphs[i] for i in d.task_paragraphs}
    assert len(task_text) == setup.n_held_out - setup.n_mlm_held_out
    assert not task_text & set(train) and task_text <= set(held)
    # the tokenizer is the one learned from the training paragraphs alone
    assert d.tokenizer.vocabulary == WordPieceTokenizer.from_texts(train, setup.vocab_size).vocabulary
    # the packed training rows are exactly the training paragraphs, the held-out rows the others
    assert np.array_equal(d.train_ids, d.tokenizer.pack_batch(train, setup.T))
    mlm_text = [p for p in held if p not in task_text]
    assert np.array_equal(d.held_ids, d.tokenizer.pack_batch(mlm_text, setup.T))
    assert int((d.train_ids != 0).sum()) >= 1_000_000   # the minimum of training tokens


@pytest.mark.slow
@pytest.mark.skipif(not SOURCES.is_dir(), reason="needs Debian's python3.11-doc (apt-get install it)")
def test_script_writes_the_committed_bytes(tmp_path):
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3.11-doc"],
                             capture_output=True, text=True).stdout
    if f"python3.11-doc {version}" != corpus.DOCS_PACKAGE:
        pytest.skip(f"python3.11-doc {version} installed; the corpus was made from {corpus.DOCS_PACKAGE}")
    out = tmp_path / "docs.tsv.gz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs_corpus.py"), str(SOURCES), str(out)],
                   check=True, capture_output=True, cwd=ROOT)
    assert out.read_bytes() == corpus.DOCS_PATH.read_bytes()


def test_the_corpus_is_package_data():
    # a wheel (a non-editable install, Colab's pip install) holds only the package data pyproject.toml lists
    import tomllib
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["geron_lib.pretraining"]
    inside = corpus.DOCS_PATH.relative_to(corpus.DOCS_PATH.parents[1])
    assert any(inside.match(pattern) for pattern in listed), (inside, listed)
