"""Write the book's corpus, geron_lib/pretraining/data/corpus.txt, from the seeded grammar in
geron_lib/pretraining/corpus.py.

Run from the repository root:  .venv/bin/python scripts/make_corpus.py [OUTPUT_PATH]
"""

import sys
from pathlib import Path

from geron_lib.pretraining.corpus import CORPUS_PATH, CORPUS_SEED, CORPUS_SENTENCES, generate


def main(path: Path = CORPUS_PATH) -> None:
    sentences = generate(CORPUS_SENTENCES, CORPUS_SEED)
    path.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    print(f"wrote {len(sentences):,} sentences, {path.stat().st_size:,} bytes, to {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS_PATH)
