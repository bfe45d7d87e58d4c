"""From numpy to PyTorch: a geron_lib MaskedLM exported into transformers' *ForMaskedLM gives the same loss,
the same gradients and, under torch.optim.AdamW, the same steps; transformers' DataCollatorForLanguageModeling
masks with the statistics of geron_lib's dynamic masking; a Trainer runs chapter 4's loop.

The tests that need torch and transformers (the hf extra) skip without them, except in CI (see conftest.py).
Every model is built from a config with seeded random weights; nothing is downloaded.
"""

import functools
import math

import numpy as np
import pytest

from geron_lib import EncoderConfig
from geron_lib.interop.hf_config import config_from_hf
from geron_lib.interop.hf_training import masking_counts
from geron_lib.interop.hf_weights import hf_mlm_names, hf_mlm_state_dict, is_transposed
from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import AdamW, TrainingConfig, clip_grad_norm, learning_rate, train_mlm

TOK = WordTokenizer([f"w{i}" for i in range(40)])
SMALL = dict(vocab_size=TOK.vocab_size, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
             intermediate_size=24, max_position_embeddings=20, initializer_range=0.3, layer_norm_eps=1e-5)
#: BERT, ALBERT factorised and shared (one group), ALBERT factorised unshared, RoBERTa; three activations.
CONFIGS = {
    "bert": dict(model_type="bert", pad_token_id=0, hidden_act="relu", type_vocab_size=2),
    "albert-shared": dict(model_type="albert", embedding_size=8, num_hidden_groups=1, hidden_act="gelu_new"),
    "albert-unshared": dict(model_type="albert", embedding_size=8, num_hidden_groups=3, hidden_act="gelu"),
    "roberta": dict(model_type="roberta", pad_token_id=0, hidden_act="gelu", type_vocab_size=1),
}
LOSS_TOLERANCE = 1e-10  # float64; the issue asks for 1e-6
GRAD_TOLERANCE = 1e-10
ADAMW_TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def torch_mlm():
    """geron_lib.interop.torch_mlm, once torch and transformers are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from geron_lib.interop import torch_mlm

    return torch_mlm


@pytest.fixture(scope="module")
def hf_training():
    """geron_lib.interop.hf_training, once torch, transformers and accelerate (for Trainer) are importable."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from geron_lib.interop import hf_training

    return hf_training


def config(name: str) -> EncoderConfig:
    return config_from_hf(SMALL | CONFIGS[name])


def masked_lm(name: str, seed: int = 3) -> MaskedLM:
    """A float64 MaskedLM whose biases and layer-norm vectors are moved off 0 and 1 (a check with those values
    could not tell a gain from a bias)."""
    model = MaskedLM(config(name), seed=seed)
    rng = np.random.default_rng(seed + 100)
    for p in model.parameters().values():
        if p.ndim == 1:
            p += rng.normal(0, 0.2, p.shape)
    return model


def batch(seed: int = 1, mask_prob: float = 0.3):
    """Six sentences of 3 to 10 words, padded to 12 positions, masked once."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(f"w{i}" for i in rng.integers(0, 40, rng.integers(3, 11))) for _ in range(6)]
    return bert_mask(TOK.encode_batch(texts, 12), TOK, mask_prob=mask_prob, rng=seed)


# --- the names, without torch -------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
def test_every_parameter_has_one_transformers_name(name):
    model = MaskedLM(config(name))
    names = hf_mlm_names(model.config)
    assert set(names) == set(model.parameters())
    assert len(set(names.values())) == len(names)
    heads = {"bert": "cls.predictions.", "albert": "predictions.", "roberta": "lm_head."}
    prefix = heads[model.config.model_type]
    assert all(v.startswith(prefix) for k, v in names.items() if k.startswith("mlm_head."))
    assert all(v.startswith(model.config.model_type + ".") for k, v in names.items()
               if not k.startswith("mlm_head."))


def test_state_dict_ties_the_decoder_and_transposes_matrices():
    model = MaskedLM(config("albert-shared"))
    sd = hf_mlm_state_dict(model)
    assert sd["predictions.decoder.weight"] is model.encoder.embeddings["word"]
    assert sd["predictions.decoder.bias"] is model.head["b_out"]
    assert sd["predictions.dense.weight"].shape == (8, 16)  # nn.Linear(H, E) stores (E, H)
    np.testing.assert_array_equal(sd["predictions.dense.weight"], model.head["W"].T)
    assert sd["predictions.bias"] is model.head["b_out"]


def test_refusals_name_the_reason():
    roberta = config("roberta")
    with pytest.raises(ValueError, match="RobertaLMHead applies the exact GELU"):
        hf_mlm_names(roberta.replace(hidden_act="gelu_new"))
    with pytest.raises(ValueError, match="pad_token_id is None"):
        hf_mlm_names(roberta.replace(pad_token_id=None))
    with pytest.raises(TypeError, match="model must be"):
        hf_mlm_state_dict(roberta)


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


# --- loss, gradients and AdamW against torch ---------------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGS)
def test_exported_model_has_transformers_state_dict_keys(torch_mlm, name):
    import torch

    from geron_lib.interop.torch_models import hf_model

    model = masked_lm(name)
    assert set(hf_mlm_state_dict(model)) == set(hf_model(model.config, head="mlm").state_dict())
    hf = torch_mlm.hf_masked_lm(model)
    assert all(p.dtype == torch.float64 for p in hf.parameters())
    assert hf.num_parameters() == model.num_parameters()


@pytest.mark.parametrize("name", CONFIGS)
def test_same_loss_as_masked_lm(torch_mlm, name):
    model, b = masked_lm(name), batch()
    theirs, _ = torch_mlm.hf_loss_and_grads(torch_mlm.hf_masked_lm(model), model.config, b)
    assert abs(theirs - model.loss(b)) < LOSS_TOLERANCE
    assert theirs > 1.0  # a real loss, not an empty batch


@pytest.mark.parametrize("name", CONFIGS)
def test_same_gradient_for_every_parameter(torch_mlm, name):
    model, b = masked_lm(name), batch(seed=2)
    diff = torch_mlm.compare_mlm(model, b)
    assert set(diff) == {"loss"} | set(model.parameters())
    worst = max(diff, key=diff.get)
    assert diff[worst] < GRAD_TOLERANCE, (worst, diff[worst])
    _, grads = model.loss_and_grads(b)
    assert np.abs(grads["mlm_head.W"]).max() > 1e-3 and np.abs(grads["embeddings.word"]).max() > 1e-3


def test_comparison_can_fail(torch_mlm):
    # one head weight changed on the torch side: the loss and that gradient move, far beyond the tolerance
    import torch

    model, b = masked_lm("roberta"), batch()
    hf = torch_mlm.hf_masked_lm(model)
    with torch.no_grad():
        hf.lm_head.layer_norm.weight.mul_(1.5)
    loss, grads = torch_mlm.hf_loss_and_grads(hf, model.config, b)
    ours, our_grads = model.loss_and_grads(b)
    assert abs(loss - ours) > 1e-3
    assert np.abs(grads["mlm_head.W"] - our_grads["mlm_head.W"]).max() > 1e-3


def test_trainers_default_decay_groups_are_geron_libs(torch_mlm):
    transformers = pytest.importorskip("transformers")
    for name in CONFIGS:
        hf = torch_mlm.hf_masked_lm(masked_lm(name))
        # Trainer names the tied decoder weight as well: compare the tensors, not the names
        tensors = dict(hf.named_parameters(remove_duplicate=False))
        decayed = {id(tensors[n]) for n in transformers.Trainer.get_decay_parameter_names(None, hf)}
        assert decayed == {id(p) for p in hf.parameters() if p.ndim >= 2}, name


@pytest.mark.parametrize("name", CONFIGS)
def test_adamw_steps_agree_with_torch(torch_mlm, name):
    # geron_lib's AdamW (decay on matrices and embeddings, eps outside the square root, bias-corrected)
    # against torch.optim.AdamW in the same two groups; three steps, the gradients clipped by the global norm
    import torch

    model = masked_lm(name)
    hf = torch_mlm.hf_masked_lm(model)
    ours = AdamW(model.parameters(), weight_decay=0.1)
    theirs = torch_mlm.torch_adamw(hf, lr=1e-2, weight_decay=0.1)
    names = hf_mlm_names(model.config)
    for step, lr in enumerate((1e-2, 5e-3, 2e-2)):
        b = batch(seed=10 + step)
        _, grads = model.loss_and_grads(b)
        clip_grad_norm(grads, 0.5)
        ours.step(grads, lr)
        torch_mlm.hf_loss_and_grads(hf, model.config, b)  # fills .grad
        torch.nn.utils.clip_grad_norm_(hf.parameters(), 0.5)
        for group in theirs.param_groups:
            group["lr"] = lr
        theirs.step()
        params = dict(hf.named_parameters())
        for k, p in model.parameters().items():
            t = params[names[k]].detach().numpy()
            t = t.T if is_transposed(k) else t
            assert np.abs(t - p).max() < ADAMW_TOLERANCE, (step, k)


def test_a_torch_loop_trains_as_train_mlm(torch_mlm):
    # chapter 4's loop in torch (same masks, same batch order, torch AdamW, clip_grad_norm_, the same
    # learning-rate schedule) ends where train_mlm ends
    import torch

    ids = batch().labels
    schedule = MaskingSchedule(np.vstack([ids, ids[::-1]]), TOK, "dynamic", mask_prob=0.3, rng=4)
    training = TrainingConfig(epochs=3, batch_size=4, lr=1e-2, seed=5)
    model = masked_lm("albert-shared")
    hf = torch_mlm.hf_masked_lm(model)
    optimizer = torch_mlm.torch_adamw(hf, lr=training.lr)
    n, total = len(schedule.ids), training.total_steps(len(schedule.ids))
    rng, t = np.random.default_rng(training.seed), 0
    hf.train()
    for epoch in range(training.epochs):
        masks, order = schedule.masks(epoch), rng.permutation(n)
        for start in range(0, n, training.batch_size):
            part = masks[order[start:start + training.batch_size]]
            assert part.selected.any()
            t += 1
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(t, total, training.lr, round(training.warmup * total))
            optimizer.zero_grad()
            hf(**torch_mlm.hf_mlm_inputs(part)).loss.backward()
            torch.nn.utils.clip_grad_norm_(hf.parameters(), training.max_grad_norm)
            optimizer.step()
    before = model.loss(schedule.masks(0))
    train_mlm(model, schedule, training)
    loss, _ = torch_mlm.hf_loss_and_grads(hf, model.config, schedule.masks(0))
    assert model.loss(schedule.masks(0)) < before - 0.1  # it learned
    assert abs(loss - model.loss(schedule.masks(0))) < 1e-8


# --- the tokenizer, the collator's masking and the Trainer --------------------------------------------------


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
