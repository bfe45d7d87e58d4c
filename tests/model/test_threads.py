"""Work shared between threads computes what plain numpy computes, BLAS on one thread inside each part."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from geron_lib.config import EncoderConfig
from geron_lib.model.attention import split_heads
from geron_lib.model.threads import SMALL_STEP, blas_threads, by_blocks, matmul, threads_for

rng = np.random.default_rng(0)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    with threadpool_limits(limits=request.param, user_api="blas"):
        assert blas_threads() == request.param
        yield request.param


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3, 4, 64, 32), (3, 4, 32, 64)),  # a stack: split by its first axis
    ((1, 4, 64, 32), (1, 4, 32, 64)),  # one batch row: split by heads
    ((300, 64), (64, 50)),             # more rows than columns: split by rows
    ((50, 64), (64, 300)),             # more columns: split by columns
    ((2, 3), (3, 4)),                  # too small to split
])
def test_matmul_is_numpys(threads, shape_a, shape_b):
    a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-13, atol=1e-13)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    assert matmul(a32, b32).dtype == np.float32
    assert blas_threads() == threads  # the BLAS limit of each part is undone


@pytest.mark.parametrize("shape_a, shape_b", [((300, 64), (64, 50)), ((50, 64), (64, 300)),
                                              ((3, 64, 32), (3, 32, 64))])
def test_matmul_adds_the_bias_to_every_row(threads, shape_a, shape_b):
    a, b, bias = rng.normal(size=shape_a), rng.normal(size=shape_b), rng.normal(size=shape_b[-1])
    np.testing.assert_allclose(matmul(a, b, bias), a @ b + bias, rtol=1e-13, atol=1e-13)


def test_matmul_writes_into_a_strided_view(threads):
    # every head's product written into its columns of one (B, T, H) array
    a, b = rng.normal(size=(2, 4, 80, 80)), rng.normal(size=(2, 4, 80, 16))
    out = np.full((2, 80, 64), np.nan)
    returned = matmul(a, b, out=split_heads(out, 4))
    assert np.shares_memory(returned, out)
    np.testing.assert_allclose(split_heads(out, 4), a @ b, rtol=1e-13, atol=1e-13)


def test_by_blocks_covers_every_value_in_order(threads):
    x = rng.normal(size=(7, 1001))  # blocks of two whole rows (up to 3000 values): 2, 2, 2 and 1 rows
    np.testing.assert_array_equal(by_blocks(lambda b: b * b + 1, x, block=3000), x * x + 1)
    np.testing.assert_array_equal(by_blocks(lambda b: b * b + 1, x.T, block=3000), x.T * x.T + 1)  # a view
    np.testing.assert_array_equal(by_blocks(lambda b: b / b.sum(-1, keepdims=True), x, block=3000),
                                  x / x.sum(-1, keepdims=True))  # a row-wise fn sees whole rows


def test_every_part_runs_with_blas_on_one_thread():
    seen, names = [], set()

    def record(block):
        seen.append(blas_threads())
        names.add(threading.current_thread().name)
        return block

    with threadpool_limits(limits=2, user_api="blas"):
        by_blocks(record, np.zeros((10, 1)), block=3)
        assert blas_threads() == 2
    assert seen == [1] * 4 and all(n.startswith("geron_lib") for n in names)


def test_an_error_in_a_part_is_raised():
    def fail(block):
        raise RuntimeError("part failed")

    with threadpool_limits(limits=2, user_api="blas"), pytest.raises(RuntimeError, match="part failed"):
        by_blocks(fail, np.zeros((10, 1)), block=3)


def test_a_small_step_runs_on_one_thread_and_a_large_one_keeps_its_threads():
    small = EncoderConfig(hidden_size=64, num_attention_heads=4, intermediate_size=256)
    rows = SMALL_STEP // (64 * 256)  # exactly the threshold: not small
    with threadpool_limits(2, user_api="blas"):
        if blas_threads() != 2:
            pytest.skip("numpy's BLAS does not let threadpoolctl set its threads")
        with threads_for(small, rows - 1):
            assert blas_threads() == 1
        assert blas_threads() == 2
        with threads_for(small, rows):
            assert blas_threads() == 2
