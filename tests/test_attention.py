"""Both attention forms: loop = batched, conversions between them, parameter formulas, bad input,
the chapter's explorer, checkers and timing helper."""

import time

import numpy as np
import pytest

from geron_lib import PRESETS, Encoder, count_parameters
from geron_lib.attention import (
    additive_mask,
    concat_attention,
    concat_attention_loop,
    multi_head_attention,
    random_attention_weights,
    sum_attention,
    sum_attention_loop,
)
from geron_lib.attention_timing import loop_vs_batched, page_faults_per_call
from geron_lib.conversions import concat_to_sum, sum_to_concat, value_maps
from geron_lib.exercises.attention import check_attention_params, check_sum_weights
from geron_lib.params import attention_param_items, attention_params, model_attention_params
from geron_lib.timing import median_seconds
from geron_lib.validate import MEMORY_LIMIT_BYTES
from geron_lib.widgets.attention import head_counts, heads_explorer

FORWARD = {"concat": (concat_attention_loop, concat_attention), "sum": (sum_attention_loop, sum_attention)}
SHAPES = [(1, 1, 4, 1), (2, 5, 12, 3), (3, 7, 16, 16), (2, 9, 24, 4), (1, 6, 32, 8)]  # (B, T, H, h)


def _inputs(B, T, H, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, T, H))
    keep = (rng.random((B, T)) < 0.7).astype(int)
    keep[:, 0] = 1  # every row attends to at least one position
    return x, additive_mask(keep, np.float64)


def _relative(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("form", ["concat", "sum"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_loop_equals_batched(form, bias, B, T, H, h):
    w = random_attention_weights(H, h, form, bias=bias, seed=B + T + H + h)
    x, mask = _inputs(B, T, H)
    loop, batched = FORWARD[form]
    for m in (None, mask):
        np.testing.assert_allclose(loop(x, w, h, m), batched(x, w, h, m), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(multi_head_attention(x, w, h, form, mask), batched(x, w, h, mask))


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_loop_equals_batched_with_a_causal_mask(form):
    B, T, H, h = 2, 6, 16, 4
    w = random_attention_weights(H, h, form, seed=13)
    x, _ = _inputs(B, T, H)
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
    x, _ = _inputs(2, 6, 16)
    changed = x.copy()
    changed[:, 4:] += 5.0  # padding that must not matter
    mask = additive_mask(np.array([[1, 1, 1, 1, 0, 0]] * 2), np.float64)
    for f in FORWARD[form]:
        np.testing.assert_allclose(f(x, w, 4, mask)[:, :4], f(changed, w, 4, mask)[:, :4], atol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_concat_to_sum_is_exact(bias, B, T, H, h):
    w = random_attention_weights(H, h, "concat", bias=bias, seed=7)
    x, mask = _inputs(B, T, H, seed=1)
    ws = concat_to_sum(w, h)
    for m in (None, mask):
        assert _relative(sum_attention(x, ws, h, m), concat_attention(x, w, h, m)) < 1e-10
    # the converted layer is a sum-form layer of the formula's size, whose value maps have rank <= d_head
    assert sum(a.size for a in ws.values()) == attention_params(H, h, "sum", bias)
    assert (np.linalg.matrix_rank(ws["W_V"]) <= H // h).all()


def test_value_maps_are_blocks_of_W_V_times_blocks_of_W_O():
    H, h = 12, 3
    w = random_attention_weights(H, h, "concat", seed=2)
    V = value_maps(w, h, "concat")
    for j in range(h):
        cols = slice(4 * j, 4 * j + 4)
        np.testing.assert_allclose(V[j], w["W_V"][:, cols] @ w["W_O"][cols, :], atol=1e-14)
    np.testing.assert_array_equal(value_maps(concat_to_sum(w, h), h, "sum"), V)


def test_value_bias_folds_into_output_bias():
    # concat form: b_V is redundant too; A_h 1 = 1, so it can move into b_O as b_V W_O
    w = random_attention_weights(16, 4, "concat", seed=3)
    folded = w | {"b_V": np.zeros(16), "b_O": w["b_O"] + w["b_V"] @ w["W_O"]}
    x, mask = _inputs(2, 5, 16)
    assert _relative(concat_attention(x, folded, 4, mask), concat_attention(x, w, 4, mask)) < 1e-12


def test_heads_are_defined_up_to_an_invertible_map():
    # W_V,h M and M^-1 W_O,h give the same layer: the concat form stores H^2 / h more numbers than it needs
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
    x, _ = _inputs(2, 5, H)
    assert _relative(concat_attention(x, moved, h), concat_attention(x, w, h)) < 1e-10
    assert not np.allclose(moved["W_V"], w["W_V"])


@pytest.mark.parametrize("B, T, H, h", SHAPES)
def test_sum_to_concat_is_exact_within_the_rank(B, T, H, h):
    w = random_attention_weights(H, h, "concat", seed=8)
    ws = concat_to_sum(w, h)
    back, error = sum_to_concat(ws, h)
    assert error < 1e-12
    x, mask = _inputs(B, T, H, seed=2)
    assert _relative(concat_attention(x, back, h, mask), concat_attention(x, w, h, mask)) < 1e-10
    assert sum(a.size for a in back.values()) == attention_params(H, h, "concat")


def test_sum_to_concat_exact_for_any_rank_at_most_the_one_asked():
    H, h, r = 24, 2, 5  # d_head = 12, every V'_h of rank 5
    rng = np.random.default_rng(9)
    ws = random_attention_weights(H, h, "sum", seed=9)
    ws["W_V"] = rng.normal(size=(h, H, r)) @ rng.normal(size=(h, r, H))
    x, mask = _inputs(2, 6, H)
    for rank in (r, 8, 12):
        back, error = sum_to_concat(ws, h, rank)
        assert error < 1e-12
        assert _relative(concat_attention(x, back, h, mask), sum_attention(x, ws, h, mask)) < 1e-10
    assert sum_to_concat(ws, h, r - 1).error > 1e-3


def test_one_head_makes_the_forms_the_same_family():
    ws = random_attention_weights(16, 1, "sum", seed=12)  # full rank 16 = d_head
    back, error = sum_to_concat(ws, 1)
    assert error < 1e-12
    x, mask = _inputs(2, 5, 16)
    assert _relative(concat_attention(x, back, 1, mask), sum_attention(x, ws, 1, mask)) < 1e-10


def test_sum_to_concat_error_is_the_best_possible():
    H, h = 16, 2
    ws = random_attention_weights(H, h, "sum", bias=False, seed=10)
    errors = []
    rng = np.random.default_rng(11)
    for rank in range(1, H // h + 1):
        back, error = sum_to_concat(ws, h, rank)
        V = value_maps(back, h, "concat")
        direct = np.linalg.norm(ws["W_V"] - V) / np.linalg.norm(ws["W_V"])
        assert error == pytest.approx(direct, rel=1e-10)
        assert (np.linalg.matrix_rank(V) <= rank).all()
        # Eckart-Young: nudging the factors of the truncated SVD never lowers the error
        for _ in range(5):
            nudged = back | {"W_V": back["W_V"] + 1e-3 * rng.normal(size=(H, H)) * (back["W_V"] != 0)}
            worse = np.linalg.norm(ws["W_V"] - value_maps(nudged, h, "concat")) / np.linalg.norm(ws["W_V"])
            assert worse >= error
        errors.append(error)
    assert all(a > b for a, b in zip(errors, errors[1:], strict=False)) and errors[-1] > 0.1
    assert sum_to_concat(ws | {"W_V": np.zeros((h, H, H))}, h).error == 0.0


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
def test_bad_forward_input(form):
    w = random_attention_weights(12, 3, form)
    x = np.zeros((2, 5, 12))
    f = FORWARD[form]
    for fn in f:
        with pytest.raises(ValueError, match="divisible by num_heads"):
            fn(x, w, 5)
        with pytest.raises(ValueError, match=r"x must have shape \(B, T, d_model\) with d_model = 12"):
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
        with pytest.raises(ValueError, match=r"W_Q'\] must be a d_model x d_model matrix"):
            fn(x, w | {"W_Q": np.array(1.0)}, 3)
        with pytest.raises(TypeError, match="num_heads must be an integer"):
            fn(x, w, 3.0)
        with pytest.raises(TypeError, match="w must be a dict"):
            fn(x, list(w.values()), 3)
        with pytest.raises(TypeError, match=r"w\['W_Q'\] must be a numpy array"):
            fn(x, w | {"W_Q": w["W_Q"].tolist()}, 3)
    with pytest.raises(ValueError, match="form must be one of"):
        multi_head_attention(x, w, 3, "Concat")


def test_form_specific_weights_refused():
    x = np.zeros((1, 4, 12))
    c, s = random_attention_weights(12, 3, "concat"), random_attention_weights(12, 3, "sum")
    with pytest.raises(ValueError, match="W_V'\\] has shape \\(12, 12\\).*needs \\(3, 12, 12\\)"):
        sum_attention(x, s | {"W_V": c["W_V"]}, 3)
    with pytest.raises(ValueError, match="holds W_O, which the sum form does not have"):
        sum_attention(x, s | {"W_O": c["W_O"]}, 3)
    with pytest.raises(ValueError, match="holds b_V.*fold value biases into b_O"):
        sum_attention_loop(x, s | {"b_V": c["b_V"]}, 3)
    with pytest.raises(ValueError, match="the concat form needs"):
        concat_attention(x, c | {"W_V": s["W_V"]}, 3)


def test_memory_refused_before_allocation():
    w = random_attention_weights(8, 2, "sum")
    T = int((MEMORY_LIMIT_BYTES / 8 / 6) ** 0.5) + 1  # the (B, h, T, T) scores alone would exceed it
    huge = np.broadcast_to(0.0, (1, T, 8))            # a view: nothing allocated
    for fn in FORWARD["sum"]:
        with pytest.raises(ValueError, match="GiB, above the limit"):
            fn(huge, w, 2)
    with pytest.raises(ValueError, match="GiB, above the limit"):
        random_attention_weights(8192, 8192, "sum")


def test_bad_conversion_input():
    c = random_attention_weights(12, 3, "concat")
    s = concat_to_sum(c, 3)
    with pytest.raises(ValueError, match=r"rank must lie in \[1, d_head\] = \[1, 4\]"):
        sum_to_concat(s, 3, 5)
    with pytest.raises(ValueError, match="rank must be at least 1"):
        sum_to_concat(s, 3, 0)
    with pytest.raises(TypeError, match="rank must be an integer"):
        sum_to_concat(s, 3, True)
    with pytest.raises(TypeError, match="rank must be an integer"):
        sum_to_concat(s, 3, 2.5)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        concat_to_sum(c, 5)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        sum_to_concat(s, 5)
    with pytest.raises(ValueError, match="missing \\['W_O'\\]"):
        concat_to_sum(s, 3)  # sum-form weights given where concat ones are expected
    with pytest.raises(ValueError, match="holds W_O"):
        sum_to_concat(c | {"W_V": s["W_V"]}, 3)
    with pytest.raises(ValueError, match="form must be one of"):
        value_maps(c, 3, "both")


@pytest.mark.parametrize("args, error, match", [
    ((12, 5, "concat"), ValueError, "divisible"),
    ((12, 3, "sums"), ValueError, "form must be one of"),
    ((0, 1, "sum"), ValueError, "d_model must be at least 1"),
    ((12.0, 3, "sum"), TypeError, "d_model must be an integer"),
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


# --- the chapter's explorer, checkers and timing helper --------------------------------------------

def test_explorer_offers_only_divisible_pairs():
    e = heads_explorer()
    assert e.data["concat"] == attention_params(768, 12, "concat")
    assert e.data["sum"] == attention_params(768, 12, "sum")
    assert e.data["ratio"] == e.data["sum"] / e.data["concat"]
    assert list(e.controls["n_heads"].options) == head_counts(768)
    assert head_counts(768) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    seen = []
    e.controls["n_heads"].observe(lambda _: seen.append(e.values), names="value")
    e.set(d_model=1024)  # 12 does not divide 1024: n_heads moves to the nearest divisor
    assert e.values["n_heads"] in (8, 16) and 1024 % e.values["n_heads"] == 0
    assert all(v["d_model"] % v["n_heads"] == 0 for v in seen)
    assert list(e.controls["n_heads"].options) == [1, 2, 4, 8, 16, 32, 64]
    e.set(d_model=96, n_heads=3)
    assert e.data["sum"] == attention_params(96, 3, "sum")
    assert e.data["heads"] == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    bars = e.fig.axes[0].containers
    assert sum(rect.get_height() for c in bars for rect in c[:1]) * 1e6 == pytest.approx(e.data["concat"])
    with pytest.raises(ValueError, match="n_heads must divide d_model"):
        heads_explorer(768, 5)
    with pytest.raises(TypeError, match="n_heads must be an integer"):
        heads_explorer(768, True)


def test_explorer_scrubber_frames():
    e = heads_explorer(384, 4)
    page = e.scrubber("heads", d_model=[192, 384], n_heads=[1, 4, 12]).data
    assert page.count('class="geron-scrub-frame"') == 6
    assert e.values == {"d_model": 384, "n_heads": 4}


def test_checkers_say_why():
    assert check_attention_params(attention_params(512, 8, "sum"), 512, 8, "sum")
    no_bias = check_attention_params(attention_params(512, 8, "sum", False), 512, 8, "sum")
    assert not no_bias and "without biases" in no_bias.message
    per_head = check_attention_params(attention_params(512, 8, "sum") + 8 * 512, 512, 8, "sum")
    assert not per_head and "redundant" in per_head.message
    other = check_attention_params(attention_params(512, 8, "concat"), 512, 8, "sum")
    assert not other and "other form" in other.message

    w = random_attention_weights(16, 4, "concat", seed=1)
    ws = concat_to_sum(w, 4)
    assert check_sum_weights(ws, w, 4)
    unfolded = check_sum_weights(ws | {"b_O": w["b_O"]}, w, 4)
    assert not unfolded and "b_O + b_V @ W_O" in unfolded.message
    transposed = check_sum_weights(ws | {"W_V": ws["W_V"].swapaxes(1, 2)}, w, 4)
    assert not transposed and "transposed" in transposed.message
    wrong_block = check_sum_weights(ws | {"W_V": ws["W_V"][::-1].copy()}, w, 4)
    assert not wrong_block and "cols_h" in wrong_block.message
    changed_q = check_sum_weights(ws | {"W_Q": 2 * ws["W_Q"]}, w, 4)
    assert not changed_q and "W_Q should carry over" in changed_q.message
    not_sum = check_sum_weights(w, w, 4)
    assert not not_sum and "not sum-form weights" in not_sum.message


def test_timing_rows_and_bad_requests():
    rows = loop_vs_batched("sum", [2, 3], [1, 2], d_model=4, repeat=1)
    assert [(r["T"], r["h"]) for r in rows] == [(2, 1), (3, 1), (2, 2), (3, 2)]
    assert all(r["loop"] > 0 and r["batched"] > 0 and r["speedup"] == r["loop"] / r["batched"] for r in rows)
    calls = []
    out = median_seconds({"a": lambda: calls.append("a")}, repeat=3, min_seconds=1e-6)
    assert set(out) == {"a"} and out["a"] > 0 and len(calls) >= 4
    with pytest.raises(ValueError, match=r"divisible by every h; it is not by \[3\]"):
        loop_vs_batched("concat", [4], [2, 3], d_model=8)
    with pytest.raises(ValueError, match="at least one value"):
        loop_vs_batched("concat", [], [1])
    with pytest.raises(ValueError, match="every T must be at least 1"):
        loop_vs_batched("concat", [0], [1])
    with pytest.raises(ValueError, match="GiB, above the limit"):
        loop_vs_batched("sum", [10**6], [1], d_model=4)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        median_seconds({}, repeat=0)
    with pytest.raises(TypeError, match="clock must be a function"):
        median_seconds({}, clock=1.0)
    wall = loop_vs_batched("concat", [2], [1], d_model=2, repeat=1, clock=time.perf_counter)
    assert wall[0]["loop"] > 0
    assert all(r["loop_faults"] >= 0 and r["batched_faults"] >= 0 for r in rows)


def test_page_faults_count_fresh_memory():
    # 64 MiB is above every allocator threshold: each call maps fresh pages and touches them all
    fresh = page_faults_per_call(lambda: np.ones(8 * 2**20), calls=2)
    reused = page_faults_per_call(lambda: None, calls=2)
    assert fresh > 10 and fresh > 10 * reused
    with pytest.raises(ValueError, match="calls must be at least 1"):
        page_faults_per_call(lambda: None, calls=0)
