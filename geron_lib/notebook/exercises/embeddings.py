"""Checkers for the factorised-embeddings chapter: call them with your answer, read the verdict."""

from __future__ import annotations

import math

from ...costs.params import linear_params
from ...studies.factorised import break_even_width, token_embedding_params
from . import Feedback, grade_number


def largest_saving_width(vocab_size: int, hidden_size: int) -> int:
    """The largest whole E for which V E + E H + H is below V H (0 if none is)."""
    E = max(math.ceil(break_even_width(vocab_size, hidden_size)) - 1, 0)
    while E > 0 and token_embedding_params(vocab_size, hidden_size, E) >= vocab_size * hidden_size:
        E -= 1  # guard against rounding in E*
    return E


def check_largest_saving_width(answer, vocab_size: int, hidden_size: int) -> Feedback:
    """Is ``answer`` the largest whole E for which factorising V x H still saves parameters?"""
    expected = largest_saving_width(vocab_size, hidden_size)
    return grade_number(
        answer, expected, what=f"the largest saving E for V = {vocab_size:,}, H = {hidden_size:,}",
        hint="Solve V E + E H + H < V H for E: E < H (V - 1) / (V + H), then take the largest whole "
             "number strictly below that bound.")


def check_token_embedding_count(answer, vocab_size: int, hidden_size: int, embedding_size: int) -> Feedback:
    """Is ``answer`` the parameter count of the V x E lookup plus the E -> H projection (with its bias)?"""
    expected = token_embedding_params(vocab_size, hidden_size, embedding_size)
    V, H, E = vocab_size, hidden_size, embedding_size
    known_slips = {V * E: "You counted the V x E lookup only: the E -> H projection is a weight matrix "
                          "E x H and a bias of H.",
                   V * E + E * H: "Almost: the E -> H projection also has a bias of H entries.",
                   V * H: "That is the direct V x H table, not the factorised one."}
    return grade_number(answer, expected, what="the factorised count", slips=known_slips,
                        hint=f"Add V E (the lookup) and E H + H (the projection, "
                             f"{linear_params(E, H):,} here).")
