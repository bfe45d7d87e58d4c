"""Both attention forms: loop = batched, masks, what the weights can and cannot tell apart, parameter
formulas, and bad input refused at the checked entry."""

import numpy as np
import pytest
from attention_cases import SHAPES, attention_inputs, max_relative_error

from geron_lib import PRESETS, Encoder, count_parameters
from geron_lib.costs.params import attention_param_items, attention_params, model_attention_params
from geron_lib.model.attention import (
    additive_mask,
    concat_attention,
    concat_attention_loop,
    multi_head_attention,
    random_attention_weights,
    sum_attention,
    sum_attention_loop,
)
from geron_lib.validate import MEMORY_LIMIT_BYTES

FORWARD = {"concat": (concat_attention_loop, concat_attention), "sum": (sum_attention_loop, sum_attention)}


@pytest.mark.parametrize("form", ["concat", "sum"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_loop_equals_batched(form, bias, B, T, H, h):
    w = random_attention_weights(H, h, form, bias=bias, seed=B + T + H + h)
    x, mask = attention_inputs(B, T, H)
    loop, batched = FORWARD[form]
    for m in (None, mask):
        np.testing.assert_allclose(loop(x, w, h, m), batched(x, w, h, m), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(multi_head_attention(x, w, h, form, mask), batched(x, w, h, mask))
    per_head = multi_head_attention(x, w, h, form, mask, per_head=True)
    np.testing.assert_array_equal(per_head, loop(x, w, h, mask))


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_loop_equals_batched_with_a_causal_mask(form):
    B, T, H, h = 2, 6, 16, 4
    w = random_attention_weights(H, h, form, seed=13)
    x, _ = attention_inputs(B, T, H)
    causal = np.triu(np.full((T, T), np.finfo(np.float64).min), k=1)[None, None]  # (1, 1, T, T)
    loop, batched = FORWARD[form]
    out = batched(x, w, h, causal)
    np.testing.assert_allclose(loop(x, w, h, causal), out, rtol=0, atol=1e-12)
    # position t sees only positions up to t: changing the last token leaves the others alone
    changed = x.copy()
    changed[:, -1] += 3.0
    np.testing.assert_allclose(batched(changed, w, h, causal)[:, :-1], out[:, :-1], atol=1e-12)


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_masked_positions_are_ignored(form):
    w = random_attention_weights(16, 4, form, seed=1)
    x, _ = attention_inputs(2, 6, 16)
    changed = x.copy()
    changed[:, 4:] += 5.0  # padding that must not matter
    mask = additive_mask(np.array([[1, 1, 1, 1, 0, 0]] * 2), np.float64)
    for f in FORWARD[form]:
        np.testing.assert_allclose(f(x, w, 4, mask)[:, :4], f(changed, w, 4, mask)[:, :4], atol=1e-12)


def test_value_bias_folds_into_output_bias():
    # concat form: b_V is redundant too; A_i 1_T = 1_T, so it can move into b_O as b_V W_O
    w = random_attention_weights(16, 4, "concat", seed=3)
    folded = w | {"b_V": np.zeros(16), "b_O": w["b_O"] + w["b_V"] @ w["W_O"]}
    x, mask = attention_inputs(2, 5, 16)
    assert max_relative_error(concat_attention(x, folded, 4, mask), concat_attention(x, w, 4, mask)) < 1e-12


def test_heads_are_defined_up_to_an_invertible_map():
    # W_V,i G and G^-1 W_O,i give the same layer: the concat form stores H^2 / h more numbers than it needs
    H, h = 16, 4
    w = random_attention_weights(H, h, "concat", seed=4)
    rng = np.random.default_rng(5)
    moved = dict(w)
    moved["W_V"], moved["W_O"], moved["b_V"] = w["W_V"].copy(), w["W_O"].copy(), w["b_V"].copy()
    for j in range(h):
        cols = slice(4 * j, 4 * j + 4)
        M = rng.normal(size=(4, 4)) + 3 * np.eye(4)
        moved["W_V"][:, cols] = w["W_V"][:, cols] @ M
        moved["b_V"][cols] = w["b_V"][cols] @ M
        moved["W_O"][cols, :] = np.linalg.solve(M, w["W_O"][cols, :])
    x, _ = attention_inputs(2, 5, H)
    assert max_relative_error(concat_attention(x, moved, h), concat_attention(x, w, h)) < 1e-10
    assert not np.allclose(moved["W_V"], w["W_V"])


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_queries_and_keys_are_defined_up_to_an_invertible_map(form):
    # W_Q,i G and W_K,i G^-T give the same scores Q_i K_i^T: h d_head^2 = H^2 / h more redundant numbers
    H, h = 16, 4
    d_head = H // h
    w = random_attention_weights(H, h, form, seed=6)
    rng = np.random.default_rng(7)
    moved = w | {k: w[k].copy() for k in ("W_Q", "b_Q", "W_K", "b_K")}
    for i in range(h):
        cols = slice(i * d_head, (i + 1) * d_head)
        G = rng.normal(size=(d_head, d_head)) + 3 * np.eye(d_head)
        G_inv_T = np.linalg.inv(G).T
        moved["W_Q"][:, cols], moved["b_Q"][cols] = w["W_Q"][:, cols] @ G, w["b_Q"][cols] @ G
        moved["W_K"][:, cols], moved["b_K"][cols] = w["W_K"][:, cols] @ G_inv_T, w["b_K"][cols] @ G_inv_T
    x, mask = attention_inputs(2, 5, H)
    batched = FORWARD[form][1]
    assert max_relative_error(batched(x, moved, h, mask), batched(x, w, h, mask)) < 1e-10
    assert not np.allclose(moved["W_Q"], w["W_Q"]) and not np.allclose(moved["W_K"], w["W_K"])
    # a G on the queries alone changes the layer: the inverse on the keys is what cancels it
    queries_only = moved | {"W_K": w["W_K"], "b_K": w["b_K"]}
    assert max_relative_error(batched(x, queries_only, h, mask), batched(x, w, h, mask)) > 1e-3


@pytest.mark.parametrize("form", ["concat", "sum"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("H, h", [(4, 1), (12, 3), (16, 16), (24, 4), (768, 12)])
def test_formula_equals_arrays_allocated(form, bias, H, h):
    w = random_attention_weights(H, h, form, bias=bias)
    items = attention_param_items(H, h, form, bias)
    assert sum(a.size for a in w.values()) == attention_params(H, h, form, bias) == sum(items.values())
    assert items["query_key"] == sum(w[k].size for k in ("W_Q", "b_Q", "W_K", "b_K") if k in w)
    assert items["value"] == sum(w[k].size for k in ("W_V", "b_V") if k in w)


@pytest.mark.parametrize("name", ["tiny-bert", "tiny-albert", "tiny-roberta", "bert-base"])
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_model_formula_agrees_with_count_parameters_and_the_encoder(name, form):
    config = PRESETS[name].replace(attention=form)
    assert model_attention_params(config) == count_parameters(config).attention
    assert model_attention_params(PRESETS[name], form=form) == count_parameters(config).attention
    if config.hidden_size <= 64:
        stored = Encoder(config).parameters()
        attention = {k: v for k, v in stored.items() if ".attention." in k and ".ln_" not in k}
        assert model_attention_params(config) == sum(v.size for v in attention.values())
        weights_only = sum(v.size for k, v in attention.items() if k.split(".")[-1].startswith("W_"))
        assert model_attention_params(config, bias=False) == weights_only


def test_the_discussions_counts():
    # values and output: H M^2 in the summed form against 2 M^2 with concat + W_O (biases aside)
    for M, h in ((512, 8), (768, 12), (64, 1)):
        assert attention_param_items(M, h, "sum", False)["value"] == h * M * M
        concat = attention_param_items(M, h, "concat", False)
        assert concat["value"] + concat["output"] == 2 * M * M
    # at h = 2 the forms store as many weights; with biases the sum form has H fewer (b_V is redundant)
    assert attention_params(768, 2, "sum", False) == attention_params(768, 2, "concat", False)
    assert attention_params(768, 2, "concat") - attention_params(768, 2, "sum") == 768


def test_bert_base_in_the_sum_form():
    concat, summed = PRESETS["bert-base"], PRESETS["bert-base"].replace(attention="sum")
    extra = count_parameters(summed).total - count_parameters(concat).total
    assert extra == 12 * (10 * 768 * 768 - 768)  # per layer: 12 value maps instead of W_V + W_O, and no b_V


# --- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["concat", "sum"])
@pytest.mark.parametrize("per_head", [False, True])
def test_bad_forward_input(form, per_head):
    w = random_attention_weights(12, 3, form)
    x = np.zeros((2, 5, 12))

    def fn(x, w, h, mask=None):
        return multi_head_attention(x, w, h, form, mask, per_head=per_head)

    with pytest.raises(ValueError, match="divisible by num_attention_heads"):
        fn(x, w, 5)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, hidden_size\) with hidden_size = 12"):
        fn(np.zeros((2, 5, 8)), w, 3)
    with pytest.raises(ValueError, match=r"x must have shape"):
        fn(np.zeros((5, 12)), w, 3)
    with pytest.raises(TypeError, match="x must be a float numpy array"):
        fn(np.zeros((2, 5, 12), int), w, 3)
    with pytest.raises(TypeError, match="x must be a float numpy array"):
        fn([[[0.0] * 12]], w, 3)
    for bad in (np.zeros((2, 5)), np.zeros((2, 3, 1, 5)), np.zeros((3, 1, 1, 5)), [[0.0] * 5] * 2):
        with pytest.raises(ValueError, match=r"mask must be an additive mask .*\(2, 1, 1, 5\)"):
            fn(x, w, 3, bad)
    with pytest.raises(ValueError, match=r"w\['W_K'\] has shape \(12, 6\)"):
        fn(x, w | {"W_K": np.zeros((12, 6))}, 3)
    with pytest.raises(ValueError, match=r"w\['b_O'\] has shape"):
        fn(x, w | {"b_O": np.zeros(3)}, 3)
    with pytest.raises(ValueError, match=r"missing \['W_V'\]"):
        fn(x, {k: v for k, v in w.items() if k != "W_V"}, 3)
    with pytest.raises(ValueError, match=r"missing \['W_V'\]"):
        fn(x, w | {"W_V": None}, 3)
    with pytest.raises(ValueError, match=r"W_Q'\] must be a hidden_size x hidden_size matrix"):
        fn(x, w | {"W_Q": np.array(1.0)}, 3)
    with pytest.raises(TypeError, match="num_attention_heads must be an integer"):
        fn(x, w, 3.0)
    with pytest.raises(TypeError, match="w must be a dict"):
        fn(x, list(w.values()), 3)
    with pytest.raises(TypeError, match=r"w\['W_Q'\] must be a numpy array"):
        fn(x, w | {"W_Q": w["W_Q"].tolist()}, 3)
    with pytest.raises(ValueError, match="form must be one of"):
        multi_head_attention(x, w, 3, "Concat")
    with pytest.raises(TypeError, match="per_head must be True or False"):
        multi_head_attention(x, w, 3, form, per_head=1)


def test_form_specific_weights_refused():
    x = np.zeros((1, 4, 12))
    c, s = random_attention_weights(12, 3, "concat"), random_attention_weights(12, 3, "sum")
    with pytest.raises(ValueError, match="W_V'\\] has shape \\(12, 12\\).*needs \\(3, 12, 12\\)"):
        multi_head_attention(x, s | {"W_V": c["W_V"]}, 3, "sum")
    with pytest.raises(ValueError, match="holds W_O, which the sum form does not have"):
        multi_head_attention(x, s | {"W_O": c["W_O"]}, 3, "sum")
    with pytest.raises(ValueError, match="holds b_V.*fold value biases into b_O"):
        multi_head_attention(x, s | {"b_V": c["b_V"]}, 3, "sum", per_head=True)
    with pytest.raises(ValueError, match="the concat form needs"):
        multi_head_attention(x, c | {"W_V": s["W_V"]}, 3, "concat")


def test_memory_refused_before_allocation():
    w = random_attention_weights(8, 2, "sum")
    T = int((MEMORY_LIMIT_BYTES / 8 / 6) ** 0.5) + 1  # the (B, h, T, T) scores alone would exceed it
    huge = np.broadcast_to(0.0, (1, T, 8))            # a view: nothing allocated
    for per_head in (False, True):
        with pytest.raises(ValueError, match="GiB, above the limit"):
            multi_head_attention(huge, w, 2, "sum", per_head=per_head)
    with pytest.raises(ValueError, match="GiB, above the limit"):
        random_attention_weights(8192, 8192, "sum")


@pytest.mark.parametrize("args, error, match", [
    ((12, 5, "concat"), ValueError, "divisible"),
    ((12, 3, "sums"), ValueError, "form must be one of"),
    ((0, 1, "sum"), ValueError, "hidden_size must be at least 1"),
    ((12.0, 3, "sum"), TypeError, "hidden_size must be an integer"),
])
def test_bad_weight_requests(args, error, match):
    with pytest.raises(error, match=match):
        random_attention_weights(*args)
    with pytest.raises(TypeError, match="bias must be True or False"):
        random_attention_weights(12, 3, bias=1)
    with pytest.raises(TypeError, match="bias must be True or False"):
        attention_params(12, 3, "sum", bias="no")
    with pytest.raises(TypeError, match="config must be an EncoderConfig"):
        model_attention_params({"hidden_size": 12})




