"""The timing helpers (loop against batched, the time split of each batched form): their rows, their
refusals, the page-fault counter, and that the products timed alone are the forward's products."""

import time

import numpy as np
import pytest

from geron_lib.model.attention import ATTENTION_FORMS, random_attention_weights
from geron_lib.studies.attention_timing import (
    loop_vs_batched,
    matrix_products,
    page_faults_per_call,
    time_split,
)
from geron_lib.timing import median_seconds


def test_timing_rows_and_bad_requests():
    rows = loop_vs_batched("sum", [2, 3], [1, 2], hidden_size=4, repeat=1)
    assert [(r["T"], r["h"]) for r in rows] == [(2, 1), (3, 1), (2, 2), (3, 2)]
    assert all(r["loop"] > 0 and r["batched"] > 0 and r["speedup"] == r["loop"] / r["batched"] for r in rows)
    calls = []
    out = median_seconds({"a": lambda: calls.append("a")}, repeat=3, min_seconds=1e-6)
    assert set(out) == {"a"} and out["a"] > 0 and len(calls) >= 4
    with pytest.raises(ValueError, match=r"divisible by every h; it is not by \[3\]"):
        loop_vs_batched("concat", [4], [2, 3], hidden_size=8)
    with pytest.raises(ValueError, match="at least one value"):
        loop_vs_batched("concat", [], [1])
    with pytest.raises(ValueError, match="every T of T_values must be at least 1"):
        loop_vs_batched("concat", [0], [1])
    with pytest.raises(ValueError, match="GiB, above the limit"):
        loop_vs_batched("sum", [10**6], [1], hidden_size=4)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        median_seconds({}, repeat=0)
    with pytest.raises(TypeError, match="clock must be a function"):
        median_seconds({}, clock=1.0)
    wall = loop_vs_batched("concat", [2], [1], hidden_size=2, repeat=1, clock=time.perf_counter)
    assert wall[0]["loop"] > 0
    assert all(r["loop_faults"] >= 0 and r["batched_faults"] >= 0 for r in rows)


def test_page_faults_count_fresh_memory():
    # 64 MiB is above every allocator threshold: each call maps fresh pages and touches them all
    fresh = page_faults_per_call(lambda: np.ones(8 * 2**20), calls=2)
    reused = page_faults_per_call(lambda: None, calls=2)
    assert fresh > 10 and fresh > 10 * reused
    with pytest.raises(ValueError, match="calls must be at least 1"):
        page_faults_per_call(lambda: None, calls=0)


@pytest.mark.parametrize("form", ["concat", "sum"])
def test_matrix_products_are_the_forward_products(form):
    # without biases, the products alone give the layer's output (summed over heads in the sum form)
    B, T, H, h = 2, 5, 12, 3
    w = random_attention_weights(H, h, form, bias=False, seed=2)
    x = np.random.default_rng(1).normal(size=(B, T, H))
    cache = {}
    want = ATTENTION_FORMS[form][0](x, w, h, cache=cache)
    products = matrix_products(form, x, w, h, cache["A"])
    got = products()
    assert got.shape == ((B, T, H) if form == "concat" else (B, h, T, H))
    np.testing.assert_allclose(got if form == "concat" else got.sum(axis=1), want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(products(), got)  # the same arrays, written again


def test_time_split_rows_and_bad_requests():
    rows = time_split(6, 2, hidden_size=8, batch=2, repeat=2)
    assert [(r["form"], r["T"], r["h"]) for r in rows] == [("concat", 6, 2), ("sum", 6, 2)]
    for r in rows:
        assert set(r) == {"form", "T", "h", "total", "products", "softmax", "rest", "faults"}
        assert r["total"] > 0 and r["products"] > 0 and r["softmax"] > 0 and np.isfinite(r["rest"])
        assert r["faults"] is None or r["faults"] >= 0
    with pytest.raises(ValueError, match=r"hidden_size \(8\) must be divisible by num_attention_heads \(3\)"):
        time_split(4, 3, hidden_size=8)
    with pytest.raises(ValueError, match="seq_len must be at least 1"):
        time_split(0, 1)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        time_split(4, 1, repeat=0)
    with pytest.raises(TypeError, match="num_attention_heads must be an integer"):
        time_split(4, 1.5)
    with pytest.raises(ValueError, match="GiB, above the limit"):
        time_split(10**6, 1, hidden_size=4)
