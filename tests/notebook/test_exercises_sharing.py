"""The cross-layer sharing chapter's checkers accept the right answer and point at the usual slips."""

import pytest

from geron_lib.notebook.exercises.sharing import check_added_per_layer, check_shared_count


def test_shared_count():
    # ALBERT large, attention shared: embeddings + E -> H map + 1 attention + 24 FFN, by hand
    V, E, H, L = 30000, 128, 1024, 24
    attention, ffn = 4 * (H * H + H) + 2 * H, 2 * H * 4 * H + 4 * H + H + 2 * H
    expected = (V + 514) * E + 2 * E + E * H + H + attention + L * ffn
    assert check_shared_count(expected, "albert-large-v2", "attention")
    ffn_shared = (V + 514) * E + 2 * E + E * H + H + L * attention + ffn
    slip = check_shared_count(ffn_shared, "albert-large-v2", "attention")
    assert not slip and "sharing='ffn'" in slip.message
    assert "layer norm" in check_shared_count(expected - 1, "albert-large-v2", "attention").message
    with pytest.raises(ValueError, match="sharing"):
        check_shared_count(1, "albert-large-v2", "half")
    with pytest.raises(ValueError, match="preset must be one of .*got 'albert-huge'"):
        check_shared_count(1, "albert-huge", "all")


def test_added_per_layer():
    H = 768
    assert check_added_per_layer(4 * (H * H + H) + 2 * H, "albert-base-v2", "ffn")
    assert check_added_per_layer(0, "albert-base-v2", "all")
    assert not check_added_per_layer(4 * (H * H + H), "albert-base-v2", "ffn")  # forgot the layer norm


def test_the_numbers_a_student_gets_are_checked_by_hand_too():
    # ALBERT large at L = 30 layers, attention shared; one more layer of ALBERT base at H = 396 (12 heads)
    V, E, H, L = 30000, 128, 1024, 30
    attention, ffn = 4 * (H * H + H) + 2 * H, 2 * H * 4 * H + 4 * H + H + 2 * H
    assert check_shared_count((V + 514) * E + 2 * E + E * H + H + attention + L * ffn, "albert-large-v2",
                              "attention", num_hidden_layers=L)
    H = 396
    assert check_added_per_layer(4 * (H * H + H) + 2 * H, "albert-base-v2", "ffn", hidden_size=H)
    with pytest.raises(ValueError, match="hidden_size .400. must be divisible by num_attention_heads .12."):
        check_added_per_layer(1, "albert-base-v2", "ffn", hidden_size=400)
    with pytest.raises(ValueError, match="num_hidden_layers"):
        check_shared_count(1, "albert-large-v2", "attention", num_hidden_layers=0)
