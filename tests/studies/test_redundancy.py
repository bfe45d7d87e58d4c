"""The redundant numbers of an attention sublayer, counted directly: parameters minus the rank of the output
Jacobian equals the closed form of chapter 3, for both forms, with and without biases."""

import numpy as np
import pytest

from geron_lib.costs.params import attention_params, redundant_attention_params
from geron_lib.model.attention import concat_attention, random_attention_weights
from geron_lib.studies.redundancy import effective_parameters, output_jacobian

# (H, h): d_head = 4, 2, 8 and 2; T = 6 rows per sequence
SIZES = [(8, 2), (8, 4), (8, 1), (6, 3)]


@pytest.mark.parametrize("form", ["concat", "sum"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("H, h", SIZES)
def test_parameters_minus_jacobian_rank_is_the_closed_form(form, bias, H, h):
    count = effective_parameters(form, H, h, seq_len=6, sequences=16, bias=bias, seed=H + h)
    assert count.parameters == attention_params(H, h, form, bias)
    assert count.redundant == redundant_attention_params(H, h, form, bias)
    # the rank is read off a wide gap: what is kept is far above the tolerance, what is dropped is rounding
    kept, dropped = count.gap
    assert kept > 1e-5 and dropped < 1e-12, count.gap


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_more_input_rows_find_no_more_directions(form):
    # the rank is the family's dimension, not a limit of the sample: twice the sequences (and another draw
    # of the weights and inputs) give the same rank
    few = effective_parameters(form, 8, 2, seq_len=6, sequences=16, seed=0)
    more = effective_parameters(form, 8, 2, seq_len=6, sequences=32, seed=3)
    assert few.rank == more.rank
    # too few rows bound the rank by their number instead: the check above is not vacuous
    assert effective_parameters(form, 8, 2, seq_len=6, sequences=2).rank == 2 * 6 * 8


def test_bert_base_per_layer():
    # 2 H^2/h + 2H at H = 768, h = 12, and half of it in the summed form
    assert redundant_attention_params(768, 12, "concat") == 99_840
    assert redundant_attention_params(768, 12, "sum") == 99_840 // 2


def test_one_head_makes_the_forms_one_family():
    # at h = 1 the summed form is the concat form with W_V W_O merged: the same number of effective parameters
    concat, summed = (effective_parameters(form, 8, 1, seed=1) for form in ("concat", "sum"))
    assert concat.rank == summed.rank == 2 * 8 * 8 + 2 * 8
    assert concat.parameters != summed.parameters


def test_the_key_bias_changes_nothing():
    # softmax ignores a constant added to every score of a row: q_s b_K^T is one for a whole row
    w = random_attention_weights(8, 2, "concat", seed=2)
    x = np.random.default_rng(3).normal(size=(4, 6, 8))
    moved = w | {"b_K": 5 * np.random.default_rng(4).normal(size=8)}
    assert np.abs(concat_attention(x, moved, 2) - concat_attention(x, w, 2)).max() < 1e-12
    assert np.abs(moved["b_K"] - w["b_K"]).max() > 1


@pytest.mark.hf
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_jacobian_equals_torch_autograd(form):
    torch = pytest.importorskip("torch")
    from torch.func import jacrev

    H, h, T = 8, 2, 5
    d_head = H // h
    w = random_attention_weights(H, h, form, seed=9)
    x = np.random.default_rng(10).normal(size=(3, T, H))
    names = list(w)
    sizes = [w[k].size for k in names]

    def forward(theta):  # the layer written again in torch, from the equations
        pieces = torch.split(theta, sizes)
        p = {k: t.reshape(w[k].shape) for k, t in zip(names, pieces, strict=True)}
        X = torch.from_numpy(x)
        q = (X @ p["W_Q"] + p["b_Q"]).reshape(3, T, h, d_head).transpose(1, 2)
        k = (X @ p["W_K"] + p["b_K"]).reshape(3, T, h, d_head).transpose(1, 2)
        A = torch.softmax(q @ k.transpose(-1, -2) / d_head**0.5, dim=-1)  # (B, h, T, T)
        if form == "concat":
            v = (X @ p["W_V"] + p["b_V"]).reshape(3, T, h, d_head).transpose(1, 2)
            y = (A @ v).transpose(1, 2).reshape(3, T, H) @ p["W_O"] + p["b_O"]
        else:
            y = torch.einsum("bhts,bhsj->btj", A, torch.einsum("bsi,hij->bhsj", X, p["W_V"])) + p["b_O"]
        return y.reshape(-1)

    theta = torch.from_numpy(np.concatenate([w[k].ravel() for k in names]))
    expected = jacrev(forward)(theta).numpy()
    np.testing.assert_allclose(output_jacobian(form, w, x, h), expected, rtol=0, atol=1e-12)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="form must be one of"):
        effective_parameters("shared")
    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        effective_parameters("concat", 8, 3)
    with pytest.raises(ValueError, match="seq_len must be at least 2"):
        effective_parameters("concat", seq_len=1)
    with pytest.raises(ValueError, match="hidden_size must be at most 64"):
        effective_parameters("concat", 128, 2)
    with pytest.raises(ValueError, match="tolerance must lie strictly between 0 and 1"):
        effective_parameters("concat", tolerance=0)
    with pytest.raises(TypeError, match="sequences must be an integer"):
        effective_parameters("concat", sequences=2.0)
