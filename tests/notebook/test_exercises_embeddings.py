"""The factorised-embeddings chapter's checkers accept the right answer and point at the usual slips."""

import pytest

from geron_lib.notebook.exercises.embeddings import (
    check_largest_saving_width,
    check_token_embedding_count,
    largest_saving_width,
)


def test_largest_saving_width():
    # RoBERTa's V = 50265 at H = 768: E* = 768 * 50264 / 51033 = 756.4..., so 756 saves and 757 does not
    assert largest_saving_width(50265, 768) == 756
    assert 50265 * 756 + 756 * 768 + 768 < 50265 * 768 < 50265 * 757 + 757 * 768 + 768
    assert check_largest_saving_width(756, 50265, 768)
    wrong = check_largest_saving_width(757, 50265, 768)
    assert not wrong and "H (V - 1) / (V + H)" in wrong.message
    assert largest_saving_width(1, 8) == 0  # one token: nothing to save
    assert not check_largest_saving_width("756", 50265, 768)


def test_token_embedding_count_names_the_slip():
    V, H, E = 30000, 4096, 128
    right = V * E + E * H + H
    assert check_token_embedding_count(right, V, H, E)
    assert "bias" in check_token_embedding_count(V * E + E * H, V, H, E).message
    assert "lookup only" in check_token_embedding_count(V * E, V, H, E).message
    assert "direct" in check_token_embedding_count(V * H, V, H, E).message
    assert "Add V E" in check_token_embedding_count(right + 1, V, H, E).message
    assert not check_token_embedding_count(None, V, H, E)
    with pytest.raises(ValueError, match="embedding_size"):
        check_token_embedding_count(1, V, H, 5000)
