"""Rows shared between threads: the public entries compute in parts what one part computes, leave BLAS's
thread count as they found it, and raise an error of a part."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from geron_lib.config import EncoderConfig
from geron_lib.model import threads
from geron_lib.model.encoder import Encoder
from geron_lib.model.mlm import MASKED, NOT_SELECTED, MaskedBatch, MaskedLM
from geron_lib.model.threads import SMALL_STEP, blas_threads, over_rows

CONFIG = EncoderConfig(vocab_size=40, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                       num_hidden_layers=2, max_position_embeddings=16)


@pytest.fixture
def two_threads():
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != 2:
            pytest.skip("numpy's BLAS does not let threadpoolctl set its threads")
        yield


def test_an_error_in_a_part_is_raised(two_threads):
    def fail(rows):
        raise RuntimeError("part failed")

    with pytest.raises(RuntimeError, match="part failed"):
        over_rows(fail, CONFIG, 4, SMALL_STEP)
    assert blas_threads() == 2


@pytest.fixture
def split_every_step(two_threads, monkeypatch):
    """Even this test's tiny steps are cut in parts."""
    monkeypatch.setattr(threads, "SMALL_STEP", 0)


def test_the_encoder_in_parts_computes_what_one_part_computes(split_every_step):
    encoder = Encoder(CONFIG, seed=1)
    rng = np.random.default_rng(0)
    ids, keep = rng.integers(0, CONFIG.vocab_size, (5, 8)), (rng.random((5, 8)) < 0.8).astype(int)
    keep[:, 0] = 1
    states = encoder.hidden_states(ids, attention_mask=keep)
    with threadpool_limits(limits=1, user_api="blas"):
        whole = encoder.hidden_states(ids, attention_mask=keep)
    assert len(states) == CONFIG.num_hidden_layers + 1
    for got, expected in zip(states, whole, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(encoder(ids, attention_mask=keep), states[-1])
    assert blas_threads() == 2  # as the caller set it


def test_masked_lm_in_parts_computes_the_mean_over_the_whole_batch(split_every_step):
    model = MaskedLM(CONFIG, seed=2)
    rng = np.random.default_rng(1)
    ids = rng.integers(5, CONFIG.vocab_size, (5, 8))
    decision = np.where(rng.random((5, 8)) < 0.3, MASKED, NOT_SELECTED)
    decision[2:4] = NOT_SELECTED   # the second part (rows 2 .. 4) selects one position, the first several
    decision[4, :3] = [MASKED, NOT_SELECTED, NOT_SELECTED]
    decision[0, 0] = MASKED
    batch = MaskedBatch(np.where(decision == MASKED, 4, ids), ids, decision, np.ones((5, 8), int))
    loss, grads = model.loss_and_grads(batch)
    with threadpool_limits(limits=1, user_api="blas"):
        whole_loss, whole_grads = model.loss_and_grads(batch)
        assert model.loss(batch) == whole_loss
    assert loss == pytest.approx(whole_loss, rel=1e-12)
    assert model.loss(batch) == pytest.approx(whole_loss, rel=1e-12)
    scale = max(np.abs(g).max() for g in whole_grads.values())  # b_K's gradient is 0 up to rounding
    for name, g in whole_grads.items():
        np.testing.assert_allclose(grads[name], g, rtol=1e-9, atol=1e-12 * scale, err_msg=name)
    empty_first = MaskedBatch(batch.input_ids, batch.labels, np.where(np.arange(5)[:, None] < 2, NOT_SELECTED,
                                                                      decision), batch.attention_mask)
    with threadpool_limits(limits=1, user_api="blas"):
        expected = model.loss_and_grads(empty_first)[0]
    assert model.loss_and_grads(empty_first)[0] == pytest.approx(expected, rel=1e-12)  # part 1 is skipped
