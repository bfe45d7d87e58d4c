"""hf_gap: the appendix's gap between the Trainer and numpy's train_mlm, taken apart. A replayed schedule
hands train_mlm given batches in order; the collator's batches read back as MaskedBatches and lose their
special replacements; replayed through train_mlm, the Trainer's batches land where the Trainer lands, and the
gap lies in the draw of masks and order. train_mlm's own batches, fed to the plain PyTorch loop, give
train_mlm's losses step by step, in one process and in two (scripts/data_parallel.py under torchrun); the
stored seeds' decomposition is judged as a family.

The tests without a torch fixture need numpy only; the others need torch, transformers and accelerate (the hf
extra): skipped without them, except in CI (see tests/conftest.py).
"""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import train_mlm
from geron_lib.studies import dynamic_masking, hf_gap

ROOT = Path(__file__).resolve().parents[2]

#: A miniature of the appendix's setup, small enough for a test: three epochs of 64 sentences, half of the
#: words selected, so that the collator draws a few special replacements.
GAP_SETUP = dynamic_masking.Setup(n_train=64, n_held_out=64, hidden_size=16, num_hidden_layers=1,
                                  intermediate_size=32, epochs=3, batch_size=16, mask_prob=0.5, seeds=(0,))


def test_replayed_schedule_hands_train_mlm_the_batches_in_order():
    # train_mlm's own masks, arranged by Replayed in train_mlm's own order: the same run, to the last digit;
    # the same masks in another order: another run
    tokenizer, train_ids, held_ids = dynamic_masking.data(GAP_SETUP)
    config = dynamic_masking.model_config(GAP_SETUP, tokenizer.vocab_size)
    training, held_out = GAP_SETUP.training(3), bert_mask(held_ids, tokenizer, rng=1)
    ours = MaskingSchedule(train_ids, tokenizer, "dynamic", rng=3)
    rng, batches = np.random.default_rng(3), []
    for epoch in range(training.epochs):
        order = rng.permutation(len(train_ids))
        batches += [ours.masks(epoch)[order[k:k + 16]] for k in range(0, len(train_ids), 16)]

    def held_out_losses(schedule):
        model = MaskedLM(config, seed=0, dtype=np.float32)
        return train_mlm(model, schedule, training, held_out=held_out).held_out_loss

    expected = held_out_losses(ours)
    assert held_out_losses(hf_gap.Replayed(train_ids, tokenizer, batches, training)) == expected
    reversed_order = hf_gap.Replayed(train_ids, tokenizer, batches[::-1], training)
    assert held_out_losses(reversed_order) != expected
    with pytest.raises(ValueError, match="4 per epoch for 3 epochs"):
        hf_gap.Replayed(train_ids, tokenizer, batches[:-1], training)
    assert [r.tolist() for r in hf_gap.batch_rows(batches[:4], train_ids)] == [
        b.tolist() for b in np.split(np.random.default_rng(3).permutation(64), 4)]
    with pytest.raises(ValueError, match="twice"):
        hf_gap.batch_rows(batches, np.concatenate([train_ids, train_ids[:1]]))


def test_collator_batches_read_back_and_lose_their_special_replacements(hf_training):
    tok = WordTokenizer.from_texts(corpus.load())
    ids = tok.encode_batch(corpus.load()[:2000], 24)
    masked, selected = hf_training.collator_masks(hf_training.hf_tokenizer(tok), ids, mask_prob=0.5, seed=4)
    width = masked.shape[1]
    collated = {"input_ids": masked, "labels": np.where(selected, ids[:, :width], -100),
                "attention_mask": (ids[:, :width] != tok.pad_id).astype(np.int64)}
    batch = hf_gap.as_masked_batch(collated, tok, 24)
    assert np.array_equal(batch.labels, ids) and np.array_equal(batch.selected[:, :width], selected)
    assert np.array_equal(batch.input_ids[:, :width], masked)
    assert (batch.input_ids[:, width:] == tok.pad_id).all()
    assert (batch.attention_mask == (ids != tok.pad_id)).all()
    others = [i for i in tok.special_ids if i != tok.mask_id]
    special = batch.selected & np.isin(batch.input_ids, others)
    assert special.sum() >= 10  # [PAD], [CLS], [SEP] or [UNK] in mid-sentence
    words = hf_gap.words_only(batch, tok, rng=0)
    assert not (words.selected & np.isin(words.input_ids, others)).any()
    assert np.array_equal(words.input_ids[~special], batch.input_ids[~special])  # nothing else moves
    assert (words.input_ids[special] >= len(tok.special_ids)).all()
    with pytest.raises(ValueError, match="width"):
        hf_gap.as_masked_batch(collated, tok, width - 1)


@pytest.mark.slow  # Trainer runs
def test_the_gap_is_not_in_the_arithmetic_padding_or_special_replacements(hf_training):
    # the appendix's claim at a miniature of its setup: the Trainer's own batches, padded to T and replayed
    # through numpy's train_mlm, land where the Trainer lands (float32 rounding of two libraries only), and
    # redrawing the collator's special replacements from the words moves the result by far less than a
    # different draw of masks and order does
    shared = dynamic_masking.torch_comparison_data(GAP_SETUP)
    runs = [hf_gap.gap_runs(*shared, GAP_SETUP.training(seed), mask_prob=GAP_SETUP.mask_prob, seed=seed)
            for seed in (0, 1)]
    for losses in runs:
        assert set(losses) == set(hf_gap.RUNS)
        assert abs(losses["PyTorch"] - losses["replayed"]) < 1e-4, losses
        assert abs(losses["replayed"] - losses["words_only"]) < 2e-3, losses
    assert any(r["words_only"] != r["replayed"] for r in runs)  # the swap redrew some
    draws = [abs(r["numpy"] - r["PyTorch"]) for r in runs]
    assert max(draws) > 2e-3, draws  # another draw: another result


def test_numpy_batches_are_the_batches_train_mlm_draws():
    # replayed in train_mlm's own order, the batches numpy_batches lists give train_mlm's run, to the last
    # digit
    tokenizer, train_ids, held_ids = dynamic_masking.data(GAP_SETUP)
    config = dynamic_masking.model_config(GAP_SETUP, tokenizer.vocab_size)
    training, held_out = GAP_SETUP.training(2), bert_mask(held_ids, tokenizer, rng=1)
    schedule = MaskingSchedule(train_ids, tokenizer, "dynamic", mask_prob=0.5, rng=2)
    batches = hf_gap.numpy_batches(schedule, training)
    assert len(batches) == training.total_steps(len(train_ids)) == 12

    def held_out_losses(masking):
        return train_mlm(MaskedLM(config, seed=0, dtype=np.float32), masking, training,
                         held_out=held_out).held_out_loss

    replayed = hf_gap.Replayed(train_ids, tokenizer, batches, training)
    assert held_out_losses(replayed) == held_out_losses(schedule)
    lr = hf_gap.lr_schedule(training, len(train_ids))  # warm-up over 1 step, then down to lr / 12
    assert [lr(t) for t in (1, 2, 12)] == [training.lr, training.lr * 11 / 12, training.lr * 1 / 12]


#: How far rounding moves the losses of two libraries apart over a run, growing from step to step: float32's
#: (seen: 3e-6 over the appendix's 160 steps) and float64's (seen: 2e-12 after the first step, 2e-9 after 12).
FLOAT32, FLOAT64 = 2e-5, 1e-8


def schedule_of_gap() -> MaskingSchedule:
    tokenizer, train_ids, _, _ = dynamic_masking.torch_comparison_data(GAP_SETUP)
    return MaskingSchedule(train_ids, tokenizer, "dynamic", mask_prob=GAP_SETUP.mask_prob, rng=0)


def _plain_runs(torch_mlm, setup, dtype, batches_of=lambda b: b):
    """(train_mlm's history, the plain torch loop's) from one seed's weights, on train_mlm's batches (or
    ``batches_of`` them), with the held-out loss after every step."""
    tokenizer, train_ids, held_out, config = dynamic_masking.torch_comparison_data(setup)
    training = setup.training(0)
    per_step = dataclasses.replace(training, evaluations=training.total_steps(len(train_ids)))
    schedule = MaskingSchedule(train_ids, tokenizer, "dynamic", mask_prob=setup.mask_prob, rng=0)
    ours = train_mlm(MaskedLM(config, seed=0, dtype=dtype), schedule, per_step, held_out=held_out)
    theirs = torch_mlm.torch_train_mlm(
        torch_mlm.hf_masked_lm(MaskedLM(config, seed=0, dtype=dtype)),
        batches_of(hf_gap.numpy_batches(schedule, training)), hf_gap.lr_schedule(training, len(train_ids)),
        weight_decay=training.weight_decay, max_grad_norm=training.max_grad_norm, held_out=held_out)
    return ours, theirs


@pytest.mark.slow  # three torch runs
def test_the_plain_torch_loop_gives_train_mlms_losses_step_by_step(torch_mlm):
    # loss.backward(), clip_grad_norm_, optimizer.step() on train_mlm's batches: after every step the
    # held-out loss of the torch model is train_mlm's, to float32 rounding (float64's in float64), and every
    # epoch's mean training loss too; the same batches in another order land elsewhere
    for dtype, tolerance in ((np.float32, FLOAT32), (np.float64, FLOAT64)):
        ours, theirs = _plain_runs(torch_mlm, GAP_SETUP, dtype)
        assert len(theirs["held_out_loss"]) == len(ours.held_out_loss) == 12
        assert np.abs(np.subtract(theirs["held_out_loss"], ours.held_out_loss)).max() < tolerance
        per_epoch = np.reshape(theirs["train_loss"], (GAP_SETUP.epochs, -1)).mean(axis=1)
        assert np.abs(per_epoch - ours.train_loss).max() < tolerance
        assert ours.held_out_loss[-1] < ours.held_out_loss[0] - 0.05  # it learned
    _, shuffled = _plain_runs(torch_mlm, GAP_SETUP, np.float32, lambda b: b[::-1])
    assert np.abs(np.subtract(shuffled["held_out_loss"], ours.held_out_loss)).max() > 100 * FLOAT32
    with pytest.raises(ValueError, match="batches is empty"):
        torch_mlm.torch_train_mlm(None, [], lambda t: 1e-3)
    with pytest.raises(TypeError, match="schedule"):
        torch_mlm.torch_train_mlm(None, hf_gap.numpy_batches(schedule_of_gap(), GAP_SETUP.training(0)), 1e-3)


def _one_process(torch_mlm, setup):
    """The plain loop in one process on the batches the data-parallel run splits: each step's loss."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _, theirs = _plain_runs(torch_mlm, setup, np.float32)
    finally:
        torch.set_num_threads(threads)
    return np.array(theirs["train_loss"]), theirs["held_out_loss"][-1]


@pytest.mark.slow  # torchrun starts three Python processes
def test_two_processes_give_the_one_process_losses(torch_mlm, tmp_path):
    # scripts/data_parallel.py under torchrun: two gloo processes on 127.0.0.1, each with half of every
    # global batch; DDP's averaged gradient, scaled by the masked tokens of the whole batch, is the
    # one-process gradient, so every step's loss on the global batch is the one-process loop's, to float32
    # rounding
    pytest.importorskip("accelerate")
    out = tmp_path / "two.json"
    script = ROOT / "scripts" / "data_parallel.py"
    subprocess.run([sys.executable, str(script), "--epochs", "1", "--out", str(out)], check=True, timeout=500,
                   cwd=ROOT)
    two = json.loads(out.read_text(encoding="utf-8"))
    setup = dataclasses.replace(dynamic_masking.Setup(), epochs=1)
    assert two["processes"] == 2 and dynamic_masking.Setup(**two["setup"]) == setup
    one, held_out = _one_process(torch_mlm, setup)
    assert len(two["train_loss"]) == len(one) == setup.steps_per_run
    assert np.abs(np.array(two["train_loss"]) - one).max() < FLOAT32
    assert abs(two["held_out_loss"] - held_out) < FLOAT32
    # the halves differ in masked tokens, so a mean of the two processes' mean losses would not be the
    # batch's mean: the scaling by the whole batch's count is what makes them agree
    tokenizer, train_ids, _, _ = dynamic_masking.torch_comparison_data(setup)
    batches = hf_gap.numpy_batches(MaskingSchedule(train_ids, tokenizer, "dynamic", rng=0), setup.training(0))
    assert any(b[0::2].selected.sum() != b[1::2].selected.sum() for b in batches)


@pytest.mark.slow  # the appendix's whole run in torch
def test_the_stored_two_process_run_is_the_appendixs_one_process_loop(torch_mlm):
    stored = hf_gap.load_data_parallel()
    setup = dynamic_masking.Setup()
    assert stored["processes"] == 2 and stored["seed"] == 0
    assert dynamic_masking.Setup(**stored["setup"]) == setup
    one, held_out = _one_process(torch_mlm, setup)
    assert np.abs(np.array(stored["train_loss"]) - one).max() < FLOAT32
    assert abs(stored["held_out_loss"] - held_out) < FLOAT32


def test_the_decomposition_is_judged_over_seeds_as_a_family():
    held_out = hf_gap.load_stored()["held_out"]
    found = hf_gap.decomposition(held_out)
    assert list(found) == list(hf_gap.FACTORS)
    runs = {k: np.array(v) for k, v in held_out.items()}
    for name, (with_it, without) in hf_gap.FACTORS.items():
        c, a, b = found[name], runs[with_it], runs[without]
        assert c.r == pytest.approx(np.corrcoef(a, b)[0, 1]) and c.paired == (c.r > 0)
        d = a - b
        half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        if c.paired:
            assert (c.interval.low, c.interval.high) == pytest.approx((d.mean() - half, d.mean() + half))
            assert c.p == pytest.approx(stats.ttest_rel(a, b).pvalue)
        assert c.corrected.low <= c.interval.low <= c.interval.high <= c.corrected.high
        assert c.corrected.resolved == c.resolved  # the corrected interval says what Holm says
    ingredients = sum(found[k].interval.mean for k in list(hf_gap.FACTORS)[:4])
    assert ingredients == pytest.approx(found["all: PyTorch - numpy"].interval.mean)  # they sum to the gap
    # Welch's interval where the seeds are not positively correlated
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0]) + 1
    crossed = {run: a for run in hf_gap.RUNS} | {"numpy": b}
    c = hf_gap.decomposition(crossed)["the batch order"]
    assert not c.paired and c.r == pytest.approx(-1)
    assert c.p == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    with pytest.raises(ValueError, match="seeds"):
        hf_gap.decomposition(held_out, 1)


def test_the_two_process_run_ships_with_the_library():
    # the appendix reads it in any install: package data, one loss per step of its run
    stored = hf_gap.load_data_parallel()
    assert hf_gap.DATA_PARALLEL.parent == hf_gap.STORED.parent and hf_gap.DATA_PARALLEL.suffix == ".json"
    assert len(stored["train_loss"]) == dynamic_masking.Setup().steps_per_run
    assert all(np.isfinite(stored["train_loss"])) and stored["train_loss"][-1] < stored["train_loss"][0] - 1
