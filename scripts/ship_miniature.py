"""Copy one trained miniature of the context grid (chapter 6, "What the savings cost in training") into the
library: its encoder's arrays and the tokenizer it was trained with, for chapter 3's picture of where trained
heads look.

    .venv/bin/python scripts/ship_miniature.py [--cache .cache/context_grid]

The weights come from the cache that ``scripts/context_grid.py`` fills (``E{E}-{sharing}-H64-seed{seed}.npz``
of ``trained_attention.CELL`` and ``SEED``); the tokenizer is learned again from the grid's training
paragraphs (deterministic), and its pieces are checked to fit the weights' vocabulary. The weights shipped
now (seed 0) are the first grid's, copied before that grid was retired; after copying others, check
chapter 3's claims about them (``tests/studies/test_trained_attention.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from geron_lib.studies import context_grid as cg
from geron_lib.studies import tradeoffs as tx
from geron_lib.studies import trained_attention as ta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(".cache/context_grid"))
    args = parser.parse_args()
    E, sharing = ta.CELL
    grid = cg.Grid()
    source = args.cache / f"E{E}-{sharing}-H{grid.narrow}-seed{ta.SEED}.npz"
    tokenizer = tx.data(grid.base).tokenizer
    with np.load(source) as arrays:
        stored = dict(arrays)
    if stored["embeddings.word"].shape[0] != tokenizer.vocab_size:
        raise SystemExit(f"{source}: {stored['embeddings.word'].shape[0]} rows, but the tokenizer has "
                         f"{tokenizer.vocab_size} tokens")
    np.savez_compressed(ta.WEIGHTS, **stored)
    ta.PIECES.write_text("\n".join(tokenizer.vocabulary) + "\n", encoding="utf-8")
    print(f"wrote {ta.WEIGHTS} ({ta.WEIGHTS.stat().st_size / 2**20:.2f} MiB) and {ta.PIECES}")


if __name__ == "__main__":
    main()
