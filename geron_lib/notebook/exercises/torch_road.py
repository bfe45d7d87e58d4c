"""Checkers for the appendix "From numpy to PyTorch"."""

from __future__ import annotations

from ...validate import check_int
from . import PERCENT, Feedback, grade_number


def special_replacement_share(vocab_size: int, n_special: int, random_share: float = 0.1) -> float:
    """share = random_share n_special / vocab_size: of the tokens transformers' collator selects, the share
    that its random replacement turns into one of ``n_special`` given special tokens (it draws the
    replacement uniformly from the whole vocabulary)."""
    vocab_size = check_int("vocab_size", vocab_size, minimum=1)
    n_special = check_int("n_special", n_special, minimum=0)
    if n_special > vocab_size:
        raise ValueError(f"n_special ({n_special}) must be at most vocab_size ({vocab_size})")
    return random_share * n_special / vocab_size


def check_special_replacement_share(answer, vocab_size: int = 172, n_special: int = 4) -> Feedback:
    """Exercise: of the tokens DataCollatorForLanguageModeling selects, what share becomes [PAD], [CLS],
    [SEP] or [UNK] (the special tokens other than [MASK])?"""
    expected = special_replacement_share(vocab_size, n_special)
    return grade_number(
        answer, expected, rel_tol=0.01, factors=PERCENT,
        what=f"the share of selected tokens that become one of those {n_special} special tokens",
        hint="A selected token is replaced by a random token with probability 0.1, and that token is drawn "
             f"uniformly from all {vocab_size} ids, special ones included.",
        slips={n_special / vocab_size: "That is the chance that a random replacement is one of them; only "
                                       "one selected token in ten gets a random replacement.",
               0.15 * 0.1 * n_special / vocab_size: "That is a share of all tokens; the question asks for "
                                                    "a share of the selected ones.",
               0.1 * (n_special + 1) / vocab_size: "A [MASK] drawn at random is still a [MASK]: the "
                                                   "question counts only the other special tokens."})
