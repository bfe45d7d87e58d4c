"""hf_gap: the appendix's gap between the Trainer and numpy's train_mlm, taken apart. A replayed schedule
hands train_mlm given batches in order; the collator's batches read back as MaskedBatches and lose their
special replacements; replayed through train_mlm, the Trainer's batches land where the Trainer lands, and the
gap lies in the draw of masks and order.

The first test needs numpy only; the others need torch, transformers and accelerate (the hf extra): skipped
without them, except in CI (see tests/conftest.py).
"""

import numpy as np
import pytest

from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import train_mlm
from geron_lib.studies import dynamic_masking, hf_gap

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
