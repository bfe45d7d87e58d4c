"""The schedule comparison: same model, data, batch order and steps; only the masks differ."""

import numpy as np
import pytest

from geron_lib.studies import dynamic_masking as mx

TINY = mx.Setup(n_train=32, n_held_out=16, hidden_size=8, intermediate_size=16, epochs=3, copies=2,
                batch_size=16, seeds=(0, 1))


def test_every_schedule_and_seed_is_trained_alike():
    r = mx.run(TINY)
    for part in ("train", "held_out"):
        assert set(r[part]) == {"static", "duplicated", "dynamic"}
        assert all(np.shape(runs) == (2, 3) for runs in r[part].values())
    # the first epoch uses the same masks, the same initial weights and the same batch order everywhere
    first = {name: [run[0] for run in r["train"][name]] for name in r["train"]}
    assert first["static"] == first["duplicated"] == first["dynamic"]
    assert first["static"][0] != first["static"][1]  # ... but seeds differ
    # static and duplicated part ways once duplicated moves to its second copy
    assert r["train"]["static"][0][1] != r["train"]["duplicated"][0][1]
    s = mx.summary(r)
    mean, sd = s["dynamic"]["held_out"]
    runs = np.array(r["held_out"]["dynamic"])[:, -1]
    assert mean == pytest.approx(runs.mean()) and sd == pytest.approx(runs.std(ddof=1))
    stored = mx.rounded(r)
    assert stored["train"]["static"][0][0] == round(r["train"]["static"][0][0], 5)


def test_held_out_sentences_are_not_training_sentences():
    tokenizer, train_ids, held_ids = mx.data(TINY)
    assert train_ids.shape == (32, TINY.T) and held_ids.shape == (16, TINY.T)
    assert not {tuple(r) for r in train_ids} & {tuple(r) for r in held_ids}


def test_setup_refuses_bad_values():
    with pytest.raises(ValueError, match="seeds is empty"):
        mx.Setup(seeds=())
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        mx.Setup(epochs=0)
    with pytest.raises(TypeError, match="setup must be a Setup"):
        mx.run({"epochs": 1})
