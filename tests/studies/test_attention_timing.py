"""The loop-against-batched timing helper: its rows, its refusals, and the page-fault counter."""

import time

import numpy as np
import pytest

from geron_lib.studies.attention_timing import loop_vs_batched, page_faults_per_call
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
    with pytest.raises(ValueError, match="every T must be at least 1"):
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
