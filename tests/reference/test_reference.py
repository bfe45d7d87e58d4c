"""The reference examples, reproduced to the printed digits, and the reference functions' invariants."""

import numpy as np
import pytest
from seed_golden import read_example

import geron_lib as g

SEQUENCE = [1, 2, 3, 4, 5, 6, 7, 8]


def _single(values):
    assert len(values) == 1, values
    return values[0]


@pytest.mark.parametrize("name, fn", [("albert", g.albert), ("roberta", g.roberta)])
def test_seed_example_reproduces_every_printed_number(name, fn):
    expected = read_example(name)
    r = fn(SEQUENCE)
    assert set(r) == set(expected), "same fields as the reference"
    assert expected["hidden"].shape == (1, 8, 8) == r.hidden.shape
    np.testing.assert_allclose(r.hidden, expected["hidden"], atol=1e-6, rtol=0)
    for key, value in expected.items():
        got = r[key]
        if key == "hidden":
            continue
        if key == "masks":
            assert [m.tolist() for m in got] == value
        elif key == "epoch_losses":
            np.testing.assert_allclose(got, value, atol=1e-6, rtol=0)
        elif isinstance(_single(value), float) and not _single(value).is_integer():
            assert got == pytest.approx(_single(value), abs=1e-6), key  # printed to 7 digits
        else:
            assert got == _single(value), key
            assert key == "headline" or not isinstance(got, float), f"{key} is a count or a flag"


def test_result_reads_as_mapping_and_attributes_and_prints_briefly():
    r = g.albert(SEQUENCE)
    assert r["hidden"] is r.hidden
    assert r.n_params == r["n_params"] == 668
    text = repr(r)
    assert "array (1, 8, 8)" in text and "n_params" in text
    assert len(text.splitlines()) == len(r)  # method as the title, one line per other field
    with pytest.raises(AttributeError):
        _ = r.no_such_field


def test_albert_params_do_not_depend_on_depth_but_unshared_grows_by_blocks():
    results = [g.albert(SEQUENCE, n_layers=L) for L in (1, 2, 5, 9)]
    assert len({r.n_params for r in results}) == 1
    for L, r in zip((1, 2, 5, 9), results, strict=True):
        assert r.n_params_unshared - r.n_params == (L - 1) * r.block_params


def test_albert_block_params_formula():
    d, F = 12, 20
    r = g.albert(SEQUENCE, d_model=d, n_heads=3, d_ff=F)
    assert r.block_params == 4 * d * d + d * F + F + F * d + d


def test_post_ln_rows_have_zero_mean_and_unit_variance():
    for r in (g.albert([[1, 2, 3], [3, 2, 0]]), g.roberta([[4, 2, 3, 1, 0]])):
        np.testing.assert_allclose(r.hidden.mean(axis=-1), 0, atol=1e-12)
        np.testing.assert_allclose(r.hidden.var(axis=-1), 1, atol=1e-4)  # eps = 1e-5 shrinks it a little


def test_batch_rows_are_encoded_independently():
    rows = [[1, 2, 3, 4], [4, 0, 2, 2]]
    together = g.albert(rows, vocab_size=6).hidden
    for b, row in enumerate(rows):
        np.testing.assert_allclose(together[b], g.albert(row, vocab_size=6).hidden[0], atol=1e-13)


def test_albert_changes_with_depth_and_seed():
    base = g.albert(SEQUENCE).hidden
    assert not np.allclose(base, g.albert(SEQUENCE, n_layers=5).hidden)
    assert not np.allclose(base, g.albert(SEQUENCE, seed=1).hidden)


def test_roberta_counts_and_masks():
    r = g.roberta([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]] * 3, mask_prob=0.25, epochs=6, d_model=12, n_heads=4)
    V, d, T, F = 11, 12, 10, 24
    block = 4 * d * d + 2 * d * F + F + d
    assert r.n_params == (V + 1) * d + T * d + 2 * block
    assert r.n_params_with_nsp - r.n_params == 2 * d
    assert r.n_masked_per_sequence == round(0.25 * 10) == 2  # 2.5 rounds half to even
    assert len(r.masks) == len(r.epoch_losses) == 6
    assert all(len(m) == 2 and list(m) == sorted(set(m)) for m in r.masks)
    assert r.mlm_loss == r.epoch_losses[-1] == r.headline
    assert len({tuple(m) for m in r.masks}) > 1, "dynamic masking draws fresh masks"


def test_roberta_single_token_is_masked():
    r = g.roberta([3])
    assert [m.tolist() for m in r.masks] == [[0]] * 4
