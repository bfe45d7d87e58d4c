"""Training: the loss falls, AdamW, clipping and the learning-rate schedule do what their equations say."""

import math

import numpy as np
import pytest

from geron_lib import EncoderConfig
from geron_lib.model.mlm import MaskedLM
from geron_lib.pretraining import corpus
from geron_lib.pretraining.masking import MaskingSchedule, bert_mask
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import (
    AdamW,
    TrainingConfig,
    clip_grad_norm,
    evaluate,
    learning_rate,
    train_mlm,
)

SENTENCES = corpus.load()[:8]
TOK = WordTokenizer.from_texts(SENTENCES)
IDS = TOK.encode_batch(SENTENCES, 16)
CONFIG = EncoderConfig(vocab_size=TOK.vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=32, max_position_embeddings=16)


def test_loss_falls_on_a_fixed_batch():
    model = MaskedLM(CONFIG, seed=0)
    batch = bert_mask(IDS, TOK, mask_prob=0.3, rng=0)
    # small initial weights: every word about equally likely, a loss near ln V
    assert model.loss(batch) == pytest.approx(math.log(TOK.vocab_size), abs=0.1)
    optimizer = AdamW(model.parameters(), weight_decay=0.0)
    for _ in range(100):
        _, grads = model.loss_and_grads(batch)
        clip_grad_norm(grads, 1.0)
        optimizer.step(grads, 1e-2)
    assert model.loss(batch) < 0.05  # memorised: the right word gets 95 % of the probability on average


def test_adamw_first_step_and_decoupled_decay():
    params = {"W": np.array([[1.0, -2.0], [0.5, 0.0]]), "b": np.array([3.0, -1.0])}
    grads = {"W": np.array([[0.1, -0.2], [0.0, 4.0]]), "b": np.array([-0.5, 0.0])}
    before = {k: v.copy() for k, v in params.items()}
    AdamW(params, eps=1e-6, weight_decay=0.1).step(grads, lr=0.01)
    # step 1: m_hat = g and v_hat = g^2, so the update is g / (|g| + eps); decay on matrices only
    for k in params:
        decay = 0.1 * before[k] if k == "W" else 0
        expected = before[k] - 0.01 * (grads[k] / (np.abs(grads[k]) + 1e-6) + decay)
        np.testing.assert_allclose(params[k], expected, rtol=1e-12)


@pytest.mark.hf
def test_adamw_matches_torch_over_several_steps():
    # decay on matrices only, as the two parameter groups of the PyTorch side say; gradients near eps
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    theirs = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    ours = AdamW({k: v.copy() for k, v in params.items()}, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    optimizer = torch.optim.AdamW([{"params": [theirs["W"]], "weight_decay": 0.1},
                                   {"params": [theirs["b"]], "weight_decay": 0.0}],
                                  lr=0.01, betas=(0.8, 0.95), eps=1e-6)
    for _ in range(5):
        grads = {k: rng.normal(size=v.shape) * 1e-6 for k, v in params.items()}  # eps matters
        ours.step(grads, lr=0.01)
        for k, p in theirs.items():
            p.grad = torch.tensor(grads[k])
        optimizer.step()
    for k in params:
        np.testing.assert_allclose(ours.params[k], theirs[k].detach().numpy(), rtol=1e-12, atol=1e-14)


def test_clip_grad_norm_scales_to_the_limit_only_when_above():
    grads = {"a": np.array([3.0]), "b": np.array([[4.0]])}
    assert clip_grad_norm(grads, 1.0) == pytest.approx(5.0)
    assert math.hypot(grads["a"][0], grads["b"][0, 0]) == pytest.approx(1.0)
    assert clip_grad_norm(grads, 2.0) == pytest.approx(1.0) and grads["a"][0] == pytest.approx(0.6)


def test_learning_rate_warms_up_then_decays_linearly():
    lrs = [learning_rate(t, 10, 1.0, 4) for t in range(1, 11)]
    assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert np.diff(lrs[3:]) == pytest.approx([-1 / 7] * 6)  # from the peak at step 4 to 0 at step 11
    assert lrs[-1] == pytest.approx(1 / 7)


def test_training_is_seeded_and_schedules_share_the_first_epoch():
    def run(name, seed):
        schedule = MaskingSchedule(IDS, TOK, name, copies=2, rng=seed)
        return train_mlm(MaskedLM(CONFIG, seed=seed), schedule,
                         TrainingConfig(epochs=3, batch_size=4, lr=1e-2, seed=seed),
                         held_out=bert_mask(IDS, TOK, rng=99))

    a, b, c = run("dynamic", 1), run("dynamic", 1), run("static", 1)
    assert a.train_loss == b.train_loss and a.held_out_loss == b.held_out_loss
    assert len(a.train_loss) == len(a.held_out_loss) == 3 and len(a.grad_norm) == 6
    assert c.train_loss[0] == a.train_loss[0] and c.train_loss[1] != a.train_loss[1]
    assert run("dynamic", 2).train_loss != a.train_loss


def test_train_refuses_bad_arguments():
    model, schedule = MaskedLM(CONFIG), MaskingSchedule(IDS, TOK)
    with pytest.raises(TypeError, match="model must be a MaskedLM"):
        train_mlm(model.encoder, schedule)
    with pytest.raises(TypeError, match="schedule must be a MaskingSchedule"):
        train_mlm(model, IDS)
    with pytest.raises(TypeError, match="config must be a TrainingConfig"):
        train_mlm(model, schedule, {"epochs": 1})
    with pytest.raises(TypeError, match="batch must be a MaskedBatch"):
        model.loss(IDS)
    nothing = bert_mask(IDS, TOK, rng=0)
    nothing = type(nothing)(nothing.input_ids, nothing.labels, np.zeros_like(nothing.decision),
                            nothing.attention_mask)
    with pytest.raises(ValueError, match="no selected position"):
        model.loss(nothing)
    with pytest.raises(ValueError, match="held_out has no selected position"):
        train_mlm(model, schedule, held_out=nothing)


@pytest.mark.parametrize("fields, error, match", [
    (dict(epochs=0), ValueError, "epochs must be at least 1"),
    (dict(batch_size=2.5), TypeError, "batch_size must be an integer"),
    (dict(warmup=1.0), ValueError, "warmup"),
    (dict(lr=0), ValueError, "lr must be positive"),
    (dict(max_grad_norm=-1), ValueError, "max_grad_norm must be positive"),
    (dict(seed=-1), ValueError, "seed must be at least 0"),
    (dict(blas_threads=0), ValueError, "blas_threads must be at least 1"),
    (dict(weight_decay="0.1"), TypeError, "weight_decay must be a real number"),
])
def test_training_config_is_checked_once_when_made(fields, error, match):
    with pytest.raises(error, match=match):
        TrainingConfig(**fields)


def test_training_config_plans_its_steps():
    assert TrainingConfig(epochs=3, batch_size=4).total_steps(10) == 9  # 3 epochs of 3 batches (4, 4, 2)


def test_evaluation_steps_by_hand():
    # no evaluations given: after each epoch; 3 epochs of 3 batches
    assert TrainingConfig(epochs=3, batch_size=4).evaluation_steps(10) == [3, 6, 9]
    # 10 steps (2 epochs of 5), 3 evaluations: nearest 10/3, 20/3 and 10 -> 3, 7, 10; across epochs
    assert TrainingConfig(epochs=2, batch_size=2, evaluations=3).evaluation_steps(10) == [3, 7, 10]
    assert TrainingConfig(epochs=2, batch_size=2, evaluations=1).evaluation_steps(10) == [10]
    assert TrainingConfig(epochs=2, batch_size=2, evaluations=10).evaluation_steps(10) == list(range(1, 11))
    with pytest.raises(ValueError, match=r"evaluations \(11\) must be at most the 10 training steps"):
        TrainingConfig(epochs=2, batch_size=2, evaluations=11).evaluation_steps(10)
    with pytest.raises(ValueError, match="evaluations must be at least 1"):
        TrainingConfig(evaluations=0)


def test_held_out_loss_at_every_evaluation_step():
    def run(evaluations):
        return train_mlm(MaskedLM(CONFIG, seed=4), MaskingSchedule(IDS, TOK, rng=4),
                         TrainingConfig(epochs=2, batch_size=2, lr=1e-2, seed=4, evaluations=evaluations),
                         held_out=bert_mask(IDS, TOK, rng=99))

    every, three = run(8), run(3)  # 8 sequences, batches of 2: 2 epochs of 4 steps
    assert every.held_out_step == list(range(1, 9)) and len(every.held_out_loss) == 8
    assert three.held_out_step == [3, 5, 8]  # nearest 8/3, 16/3 and 8
    # evaluating does not change training: the three losses are the every-step run's at those steps
    assert three.held_out_loss == [every.held_out_loss[s - 1] for s in three.held_out_step]
    assert three.train_loss == every.train_loss and len(three.train_loss) == 2  # still per epoch
    by_epoch = run(None)
    assert by_epoch.held_out_step == [4, 8] and by_epoch.held_out_loss == [every.held_out_loss[3],
                                                                           every.held_out_loss[7]]
    model = MaskedLM(CONFIG, seed=4)  # the last evaluation is the trained model's held-out loss
    held_out = bert_mask(IDS, TOK, rng=99)
    train_mlm(model, MaskingSchedule(IDS, TOK, rng=4),
              TrainingConfig(epochs=2, batch_size=2, lr=1e-2, seed=4, evaluations=3), held_out=held_out)
    assert evaluate(model, held_out) == three.held_out_loss[-1]
    no_held_out = train_mlm(MaskedLM(CONFIG, seed=4), MaskingSchedule(IDS, TOK, rng=4),
                            TrainingConfig(epochs=2, batch_size=2, evaluations=3))
    assert no_held_out.held_out_loss == no_held_out.held_out_step == []
    with pytest.raises(ValueError, match=r"evaluations \(9\) must be at most the 8 training steps"):
        run(9)


def test_evaluate_in_chunks_equals_the_whole_batch():
    model, batch = MaskedLM(CONFIG, seed=3), bert_mask(IDS, TOK, mask_prob=0.3, rng=4)
    assert evaluate(model, batch, batch_size=3) == pytest.approx(model.loss(batch), rel=1e-12)


def test_evaluate_refuses_a_batch_with_nothing_to_predict():
    # no masked position: the mean loss would divide by zero, so it is refused, saying why
    model, batch = MaskedLM(CONFIG, seed=3), bert_mask(IDS, TOK, mask_prob=0.3, rng=4)
    empty = type(batch)(batch.input_ids, batch.labels, np.zeros_like(batch.decision), batch.attention_mask)
    with pytest.raises(ValueError, match="nothing to predict"):
        evaluate(model, empty)
    with pytest.raises(TypeError, match="batch must be a MaskedBatch"):
        evaluate(model, IDS)
    # a chunk with nothing selected is skipped, the rest still counts
    some = np.zeros_like(batch.decision)
    some[-1] = batch.decision[-1]
    partial = type(batch)(batch.input_ids, batch.labels, some, batch.attention_mask)
    assert evaluate(model, partial, batch_size=2) == pytest.approx(model.loss(partial[-1:]), rel=1e-12)


def test_progress_is_called_once_per_step():
    calls = []
    schedule = MaskingSchedule(IDS, TOK, rng=0)
    train_mlm(MaskedLM(CONFIG), schedule, TrainingConfig(epochs=2, batch_size=4), progress=calls.append)
    assert len(calls) == 4 and calls[-1].startswith("epoch 2/2, loss ")
