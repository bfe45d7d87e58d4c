"""hf_training: what a masking did, counted; transformers' tokenizer encodes as the WordTokenizer; its
DataCollatorForLanguageModeling masks with the statistics of geron_lib's dynamic masking; a Trainer runs
chapter 4's loop, seeded, takes the steps a plain torch loop takes on the batches it draws, and hands them
back (tests/studies/test_hf_gap.py replays them through numpy's train_mlm).

All but the first test need torch, transformers and accelerate (the hf extra): skipped without them, except in
CI (see tests/conftest.py).
"""

import functools
import math

import numpy as np
import pytest
from mlm_cases import batch, config

from geron_lib import EncoderConfig
from geron_lib.interop.hf_training import masking_counts
from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import learning_rate
from geron_lib.studies import hf_gap

#: The hf and slow tiers (tests/conftest.py): torch, transformers and accelerate, and Trainer runs.
pytestmark = [pytest.mark.hf, pytest.mark.slow]


def test_masking_counts_reads_what_a_masking_did():
    original = np.array([[1, 10, 11, 12, 13, 2, 0]])
    masked = np.array([[1, 3, 11, 0, 20, 2, 0]])
    selected = np.array([[0, 1, 1, 1, 1, 0, 0]], bool)
    counts = masking_counts(original, masked, selected, mask_id=3, special_ids=range(5))
    assert counts == {"maskable": 4, "selected": 4, "mask": 1, "other": 2, "other_special": 1, "unchanged": 1}
    with pytest.raises(ValueError, match="special token"):
        masking_counts(original, masked, np.ones_like(selected), mask_id=3, special_ids=range(5))
    with pytest.raises(ValueError, match="one shape"):
        masking_counts(original, masked[:, :3], selected, mask_id=3, special_ids=range(5))


@pytest.fixture(scope="module")
def book_tokenizer():
    return WordTokenizer.from_texts(corpus.load())


def test_hf_tokenizer_encodes_as_word_tokenizer(hf_training, book_tokenizer):
    hf_tok = hf_training.hf_tokenizer(book_tokenizer)
    assert len(hf_tok) == book_tokenizer.vocab_size
    assert sorted(hf_tok.all_special_ids) == list(book_tokenizer.special_ids)
    assert (hf_tok.pad_token_id, hf_tok.mask_token_id) == (book_tokenizer.pad_id, book_tokenizer.mask_id)
    texts = corpus.load() + ["Don't stop, it's 42!  The Cat's-hat.", "héllo\twörld\n", "the [MASK] cat"]
    assert hf_tok(texts)["input_ids"] == [book_tokenizer.encode(t) for t in texts]
    with pytest.raises(TypeError, match="WordTokenizer"):
        hf_training.hf_tokenizer(["[PAD]", "a"])


def _shares(counts: dict) -> dict[str, tuple[float, int]]:
    """(observed share, its denominator) for the selection rate and the split."""
    return {"selected": (counts["selected"] / counts["maskable"], counts["maskable"])} | {
        k: (counts[k] / counts["selected"], counts["selected"]) for k in ("mask", "other", "unchanged")}


def test_collator_masks_with_the_statistics_of_dynamic_masking(hf_training, book_tokenizer):
    # the book's corpus, padded to 24 positions, masked over two epochs by each: 106,596 maskable tokens
    tok = book_tokenizer
    ids = tok.encode_batch(corpus.load(), 24)
    schedule = MaskingSchedule(ids, tok, "dynamic", rng=7)
    hf_tok = hf_training.hf_tokenizer(tok)
    ours, theirs = [], []
    for epoch in range(2):
        m = schedule.masks(epoch)
        ours.append(masking_counts(ids, m.input_ids, m.selected, mask_id=tok.mask_id,
                                   special_ids=tok.special_ids))
    masked, selected = hf_training.collator_masks(hf_tok, ids, seed=7)
    again, selected_again = hf_training.collator_masks(hf_tok, ids, seed=7)
    assert np.array_equal(again, masked) and np.array_equal(selected_again, selected)  # seeded
    width = masked.shape[1]
    assert width == 16 and (ids[:, width:] == tok.pad_id).all()  # padded back to the longest sentence
    for seed in (7, 8):  # two epochs of dynamic masking: two fresh maskings
        masked, selected = hf_training.collator_masks(hf_tok, ids, seed=seed)
        theirs.append(masking_counts(ids[:, :width], masked, selected, mask_id=tok.mask_id,
                                     special_ids=tok.special_ids))
    ours, theirs = ({k: sum(c[k] for c in counts) for k in counts[0]} for counts in (ours, theirs))
    assert ours["maskable"] == theirs["maskable"] >= 100_000
    assert ours["other_special"] == 0  # geron_lib draws random replacements from the words only
    expected = {"selected": 0.15, "mask": 0.8, "other": 0.1, "unchanged": 0.1}
    for key, (share, n) in _shares(ours).items():
        their_share, their_n = _shares(theirs)[key]
        p = expected[key]
        for observed, count in ((share, n), (their_share, their_n)):
            assert abs(observed - p) <= 4 * math.sqrt(p * (1 - p) / count), (key, observed)
        se_difference = math.sqrt(p * (1 - p) * (1 / n + 1 / their_n))
        assert abs(share - their_share) <= 4 * se_difference, (key, share, their_share)
    # transformers draws random replacements from the whole vocabulary, the special tokens included: a token
    # that became another one is any id but [MASK] and itself, [PAD], [CLS], [SEP] or [UNK] in 4 of V - 2
    share_special, p_special = theirs["other_special"] / theirs["other"], 4 / (tok.vocab_size - 2)
    assert abs(share_special - p_special) <= 4 * math.sqrt(p_special * (1 - p_special) / theirs["other"])


def test_collator_never_selects_special_tokens_or_padding(hf_training, book_tokenizer):
    tok = book_tokenizer
    ids = tok.encode_batch(corpus.load()[:500], 16)
    _, selected = hf_training.collator_masks(hf_training.hf_tokenizer(tok), ids, mask_prob=0.9, seed=3)
    assert not selected[ids < len(tok.special_ids)].any()
    assert selected[ids >= len(tok.special_ids)].mean() > 0.85


def test_trainer_runs_chapter_4s_loop_deterministically(torch_mlm, hf_training, book_tokenizer):
    import torch

    tok = book_tokenizer
    texts = corpus.load()
    train_ids, held_ids = tok.encode_batch(texts[:64], 16), tok.encode_batch(texts[-64:], 16)
    held_out = bert_mask(held_ids, tok, rng=1)
    config = EncoderConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=17,
                           type_vocab_size=1, layer_norm_eps=1e-5, model_type="roberta",
                           pad_token_id=tok.pad_id)
    total = 3 * 64 // 16
    schedule = functools.partial(learning_rate, total=total, peak=3e-3, warmup=1)
    runs = []
    for _ in range(2):
        model = MaskedLM(config, seed=0, dtype=np.float32)
        hf = torch_mlm.hf_masked_lm(model)
        with torch.no_grad():
            before = float(hf(**torch_mlm.hf_mlm_inputs(held_out)).loss)
        runs.append(hf_training.hf_train_mlm(hf, hf_training.hf_tokenizer(tok), train_ids, epochs=3,
                                             batch_size=16, lr=3e-3, schedule=schedule, held_out=held_out,
                                             seed=2))
    assert runs[0] == runs[1]  # seeded: the same masks, order and losses
    assert len(runs[0]["train_loss"]) == len(runs[0]["held_out_loss"]) == 3
    assert runs[0]["held_out_loss"][-1] < before - 0.05


def test_trainer_refuses_bad_arguments(torch_mlm, hf_training, book_tokenizer):
    model = MaskedLM(config("roberta"), dtype=np.float32)
    hf, b = torch_mlm.hf_masked_lm(model), batch()
    kwargs = dict(epochs=1, batch_size=2, lr=1e-3, schedule=lambda t: 1e-3, held_out=b)
    with pytest.raises(ValueError, match="seed"):
        hf_training.hf_train_mlm(hf, None, b.labels, **(kwargs | {"seed": 0}))
    with pytest.raises(TypeError, match="schedule"):
        hf_training.hf_train_mlm(hf, None, b.labels, **(kwargs | {"schedule": 1e-3}))


def test_trainer_takes_the_torch_loops_steps_on_the_batches_it_draws(torch_mlm, hf_training, book_tokenizer,
                                                                     monkeypatch):
    # record every batch the collator hands the Trainer, replay them through a plain torch loop (torch_adamw,
    # clip_grad_norm_, the schedule): the same held-out losses, to the last digit
    import torch
    from transformers.data import data_collator

    recorded = []
    collate = data_collator.DataCollatorForLanguageModeling.torch_call

    def recording(self, examples):
        out = collate(self, examples)
        recorded.append({k: v.clone() for k, v in out.items()})
        return out

    monkeypatch.setattr(data_collator.DataCollatorForLanguageModeling, "torch_call", recording)
    tok, texts = book_tokenizer, corpus.load()
    train_ids, held_out = tok.encode_batch(texts[:48], 16), bert_mask(tok.encode_batch(texts[-48:], 16), tok)
    config = EncoderConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=17,
                           type_vocab_size=1, layer_norm_eps=1e-5, model_type="roberta",
                           pad_token_id=tok.pad_id)
    schedule = functools.partial(learning_rate, total=6, peak=1e-2, warmup=2)
    hf = torch_mlm.hf_masked_lm(MaskedLM(config, seed=1, dtype=np.float32))
    losses = hf_training.hf_train_mlm(hf, hf_training.hf_tokenizer(tok), train_ids, epochs=2, batch_size=16,
                                      lr=1e-2, schedule=schedule, held_out=held_out, seed=3)
    assert len(recorded) == 6
    replay = torch_mlm.hf_masked_lm(MaskedLM(config, seed=1, dtype=np.float32)).train()
    optimizer = torch_mlm.torch_adamw(replay, lr=1e-2)
    held_out_loss = []
    for t, inputs in enumerate(recorded, 1):
        for group in optimizer.param_groups:
            group["lr"] = schedule(t)
        optimizer.zero_grad()
        replay(**inputs).loss.backward()
        torch.nn.utils.clip_grad_norm_(replay.parameters(), 1.0)
        optimizer.step()
        if t % 3 == 0:
            with torch.no_grad():
                held_out_loss.append(float(replay(**torch_mlm.hf_mlm_inputs(held_out)).loss))
    assert held_out_loss == losses["held_out_loss"]


def test_trainer_records_the_batches_it_trains_on(hf_training, torch_mlm, book_tokenizer):
    tok, texts = book_tokenizer, corpus.load()
    train_ids, held_out = tok.encode_batch(texts[:32], 16), bert_mask(tok.encode_batch(texts[-32:], 16), tok)
    cfg = EncoderConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=17, type_vocab_size=1,
                        layer_norm_eps=1e-5, model_type="roberta", pad_token_id=tok.pad_id)
    kwargs = dict(epochs=2, batch_size=16, lr=1e-2, schedule=lambda t: 1e-2, held_out=held_out, seed=3)
    hf_tok, runs, recorded = hf_training.hf_tokenizer(tok), [], []
    for record in (None, recorded):
        hf = torch_mlm.hf_masked_lm(MaskedLM(cfg, seed=1, dtype=np.float32))
        runs.append(hf_training.hf_train_mlm(hf, hf_tok, train_ids, record=record, **kwargs))
    assert runs[0] == runs[1]  # recording changes nothing
    assert len(recorded) == 4 and {"input_ids", "labels", "attention_mask"} <= set(recorded[0])
    rows = np.sort(np.concatenate(hf_gap.batch_rows(
        [hf_gap.as_masked_batch(b, tok, 16) for b in recorded[:2]], train_ids)))
    assert rows.tolist() == list(range(32))  # one epoch: every sentence once
    with pytest.raises(TypeError, match="record must be a list"):
        hf_training.hf_train_mlm(hf, hf_tok, train_ids, record=(), **kwargs)
