"""The heads figure draws one panel per (layer, head), labels the outer panels with the tokens, and refuses
a weight array that does not fit the tokens."""

import numpy as np
import pytest

from geron_lib.notebook.attention_maps import head_patterns_figure


def _weights(L=3, h=2, T=4, seed=0):
    x = np.random.default_rng(seed).random((L, h, T, T))
    return x / x.sum(-1, keepdims=True)


def test_one_panel_per_layer_and_head_with_token_labels():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    A = _weights()
    fig = head_patterns_figure(tokens, A, layers=[1, 3])
    axes = [ax for ax in fig.axes if ax.images]
    assert len(axes) == 2 * 2
    assert [ax.get_title() for ax in axes] == ["layer 1, head 1", "layer 1, head 2",
                                               "layer 3, head 1", "layer 3, head 2"]
    np.testing.assert_array_equal(axes[2].images[0].get_array(), A[2, 0])   # layer 3, head 1
    assert [t.get_text() for t in axes[0].get_yticklabels()] == tokens       # left column
    assert not any(t.get_text() for t in axes[1].get_yticklabels())           # inner panels: none
    assert [t.get_text() for t in axes[3].get_xticklabels()] == tokens       # bottom row


@pytest.mark.parametrize("A, tokens, match", [
    (np.ones((2, 2, 3, 3)), ["a", "b"], "A must be"),
    (np.ones((2, 3, 3)), ["a", "b", "c"], "A must be"),
])
def test_shapes_that_do_not_fit_are_refused(A, tokens, match):
    with pytest.raises(ValueError, match=match):
        head_patterns_figure(tokens, A)


def test_layers_outside_the_model_are_refused():
    with pytest.raises(ValueError, match="layers must lie between 1 and L = 3"):
        head_patterns_figure(["a", "b", "c", "d"], _weights(), layers=[4])
    with pytest.raises(ValueError, match="every layer must be at least 1"):
        head_patterns_figure(["a", "b", "c", "d"], _weights(), layers=[0])
