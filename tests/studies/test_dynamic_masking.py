"""The schedule comparison: same model, data, batch order and steps; only the masks differ."""

import dataclasses

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


def test_a_run_stores_the_loss_at_every_held_out_target():
    # the intervals are over seeds and these targets: their mean must be the run's last held-out loss
    r = mx.run(TINY)
    _, _, held_ids = mx.data(TINY)
    held_out = mx.bert_mask(held_ids, mx.data(TINY)[0], mask_prob=TINY.mask_prob, rng=mx.HELD_OUT_MASK_SEED)
    for name in r["held_out"]:
        for curve, tokens in zip(r["held_out"][name], r["held_out_tokens"][name], strict=True):
            assert len(tokens) == held_out.selected.sum()
            assert np.mean(tokens) == pytest.approx(curve[-1], rel=1e-5)
    assert len(mx.rounded(r)["held_out_tokens"]["static"]) == len(TINY.seeds)


def test_the_control_changes_only_the_sentences_a_masking_leaves_empty():
    control = dataclasses.replace(TINY, at_least_one=True)
    plain, treated = (mx.train_one(s, "static", 0) for s in (TINY, control))
    # the same held-out targets, so the two are compared target by target
    assert len(plain["held_out_tokens"]) == len(treated["held_out_tokens"])
    assert plain["train"] != treated["train"]


def test_the_declared_comparisons_name_stored_runs_and_schedules():
    stored = {key: {"setup": None, **{part: {name: [[1.0], [2.0]] for name in mx.SCHEDULES}
                                      for part in mx.PARTS}} for key in mx.RUNS}
    for _, arm, against in mx.PRIMARY + mx.EXPLORATORY:
        assert mx.token_losses(stored, arm).shape == mx.token_losses(stored, against).shape == (2, 1)
    assert len(mx.PRIMARY) == 4 and not {c[0] for c in mx.PRIMARY} & {c[0] for c in mx.EXPLORATORY}
    with pytest.raises(ValueError, match="arm's run must be one of"):
        mx.token_losses(stored, ("nowhere", "static"))


def test_clipping_effect_trains_each_seed_clipped_and_never_clipped():
    r = mx.clipping_effect(TINY)
    assert r["clipped"].shape == r["unclipped"].shape == (len(TINY.seeds), r["clipped"].shape[1])
    assert 0 < r["largest_norm"] < mx.NO_CLIP  # the unclipped runs never reached their threshold
    # the clipped arm is train_one's own run; the unclipped one differs wherever a norm passed 1
    assert np.allclose(r["clipped"][0], mx.train_one(TINY, "dynamic", 0)["held_out_tokens"])
    clip_acted = r["largest_norm"] > TINY.training(0).max_grad_norm
    assert clip_acted == (not np.allclose(r["clipped"], r["unclipped"]))
