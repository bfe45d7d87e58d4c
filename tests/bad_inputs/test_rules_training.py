"""Training's entries at bad and unusual inputs: AdamW and its step, gradient clipping, the learning-rate
schedule, TrainingConfig, evaluate and train_mlm. Each rule refuses with a message naming the argument and
the rule; an unusual input that means something gets the right answer."""

from functools import partial as call

import numpy as np
import pytest

from bad_inputs.inputs import DECISION, IDS, INF, KEEP, NAN
from bad_inputs.outcome import assert_python_twin, assert_same, case, refused, run, uses
from geron_lib.model.mlm import MASKED, MaskedBatch, MaskedLM
from geron_lib.pretraining.masking import MaskingSchedule
from geron_lib.pretraining.tokenizer import WordTokenizer
from geron_lib.pretraining.train import (
    AdamW,
    TrainingConfig,
    clip_grad_norm,
    evaluate,
    learning_rate,
    train_mlm,
)

BATCH = MaskedBatch(np.where(DECISION == MASKED, 4, IDS), IDS, DECISION, KEEP)
NOTHING_SELECTED = MaskedBatch(IDS, IDS, np.zeros_like(IDS), KEEP)
PARAMS = {"W": np.ones((2, 2)), "b": np.zeros(2)}
GRADS = {"W": np.full((2, 2), 0.5), "b": np.full(2, 0.5)}
#: One Adam step at lr moves a weight by lr g^ / (sqrt(v^) + eps) = lr |g| / (|g| + eps), and decays a matrix
LR_32 = float(np.float32(1e-3))
ADAM_MOVE = LR_32 * 0.5 / (0.5 + 1e-6)


def fresh_adamw(**kwargs) -> AdamW:
    """AdamW on a copy of PARAMS."""
    return AdamW({k: v.copy() for k, v in PARAMS.items()}, **kwargs)


def stepped(lr, grads=None) -> dict[str, np.ndarray]:
    """PARAMS after one AdamW step at ``lr`` on ``grads`` (GRADS by default)."""
    optimizer = fresh_adamw()
    optimizer.step(GRADS if grads is None else grads, lr)
    return optimizer.params


def betas_of(betas) -> tuple[float, float]:
    optimizer = fresh_adamw(betas=betas)
    return optimizer.beta1, optimizer.beta2


def weight_decay_of(weight_decay) -> float:
    return TrainingConfig(weight_decay=weight_decay).weight_decay


def clipped(grads: dict, max_norm: float) -> tuple[float, dict]:
    """(the norm before clipping, the gradients after) of clip_grad_norm on a copy of ``grads``."""
    grads = {k: np.array(v, dtype=float) for k, v in grads.items()}
    return clip_grad_norm(grads, max_norm), grads


def train_on_30_words(model: MaskedLM):
    """train_mlm on a schedule of a 30-word vocabulary (its ids past the small model's 20)."""
    words = WordTokenizer([f"w{i}" for i in range(30)])
    return train_mlm(model, MaskingSchedule(words.encode_batch(["w29 w28"], 4), words))


# Numbers out of their range ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("AdamW", "betas (1.0, 0.999): 1 - beta^t = 0", call(fresh_adamw, betas=(1.0, 0.999)),
         ("betas[0]", "[0, 1)")),
    case("AdamW", "betas (0.9, 1.5)", call(fresh_adamw, betas=(0.9, 1.5)), ("betas[1]", "[0, 1)")),
    case("AdamW", "betas (-0.1, 0.9)", call(fresh_adamw, betas=(-0.1, 0.9)), ("betas[0]",)),
    case("AdamW", "eps 0", call(fresh_adamw, eps=0), ("eps", "positive")),
    case("AdamW", "weight_decay -0.01", call(fresh_adamw, weight_decay=-0.01), ("weight_decay", "[0, 1)")),
    case("AdamW", "weight_decay 5", call(fresh_adamw, weight_decay=5), ("weight_decay", "[0, 1)")),
    case("AdamW.step", "lr -1e-3", call(stepped, -1e-3), ("lr", "at least 0")),
    case("clip_grad_norm", "max_norm 0", call(clip_grad_norm, GRADS, 0), ("max_norm", "positive")),
    case("learning_rate", "warmup 0 at step 0", call(learning_rate, 0, 10, 1e-3, 0), ("step", "at least 1")),
    case("learning_rate", "warmup past total", call(learning_rate, 5, 10, 1e-3, 11),
         ("warmup", "at most 10")),
    case("learning_rate", "step past total + 1", call(learning_rate, 12, 10, 1e-3, 2),
         ("step", "at most 11")),
    case("learning_rate", "total 0", call(learning_rate, 1, 0, 1e-3, 0), ("total", "at least 1")),
    case("TrainingConfig", "weight_decay 5", call(TrainingConfig, weight_decay=5),
         ("weight_decay", "[0, 1)")),
    case("TrainingConfig", "weight_decay -0.01", call(TrainingConfig, weight_decay=-0.01), ("weight_decay",)),
    case("TrainingConfig", "lr 0", call(TrainingConfig, lr=0), ("lr", "positive")),
    case("TrainingConfig", "epochs 10**9 (a list of 10**9 evaluation steps, days of training)",
         call(TrainingConfig, epochs=10**9), ("epochs", "at most 10000")),
    case("TrainingConfig", "evaluations 10**9", call(TrainingConfig, evaluations=10**9),
         ("evaluations", "at most")),
    case("TrainingConfig", "warmup 1", call(TrainingConfig, warmup=1), ("warmup", "[0, 1)")),
    case("TrainingConfig", "epochs 0", call(TrainingConfig, epochs=0), ("epochs", "at least 1")),
    case("TrainingConfig", "seed -1", call(TrainingConfig, seed=-1), ("seed", "at least 0")),
    case("TrainingConfig", "evaluations 0", call(TrainingConfig, evaluations=0), ("evaluations",)),
    case("TrainingConfig.total_steps", "n_sequences 0", call(TrainingConfig().total_steps, 0),
         ("n_sequences", "at least 1")),
    case("TrainingConfig.evaluation_steps", "more evaluations than steps",
         call(TrainingConfig(evaluations=5).evaluation_steps, 3), ("evaluations", "at most")),
    case("evaluate", "batch_size 0", call(evaluate, uses.mlm, BATCH, 0), ("batch_size", "at least 1")),
])
def test_a_number_out_of_its_range_is_refused_naming_it_and_the_range(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# NaN and infinity -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("AdamW", "betas (NaN, 0.9)", call(fresh_adamw, betas=(NAN, 0.9)), ("betas[0]", "finite")),
    case("AdamW.step", "lr NaN (it would poison the weights)", call(stepped, NAN), ("lr", "finite")),
    case("AdamW.step", "lr inf", call(stepped, INF), ("lr", "finite")),
    case("AdamW.step", "a NaN gradient", call(stepped, 1e-3, GRADS | {"b": np.array([NAN, 0.0])}),
         ("grads['b']", "finite")),
    case("clip_grad_norm", "max_norm NaN (no clipping, silently)", call(clip_grad_norm, GRADS, NAN),
         ("max_norm", "finite")),
    case("clip_grad_norm", "an inf gradient", call(clip_grad_norm, {"W": np.array([INF])}, 1.0),
         ("grads", "NaN")),
    case("learning_rate", "peak NaN", call(learning_rate, 1, 10, NAN, 2), ("peak", "finite")),
    case("TrainingConfig", "weight_decay NaN", call(TrainingConfig, weight_decay=NAN),
         ("weight_decay", "finite")),
    case("TrainingConfig", "lr NaN", call(TrainingConfig, lr=NAN), ("lr", "finite")),
    case("TrainingConfig", "lr 10**400", call(TrainingConfig, lr=10**400), ("lr", "finite")),
    case("TrainingConfig", "max_grad_norm inf", call(TrainingConfig, max_grad_norm=INF),
         ("max_grad_norm", "finite")),
])
def test_nan_or_infinity_is_refused_naming_it(entry, names):
    with refused(ValueError, *names):
        entry()


# Wrong types ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("AdamW", "betas one number", call(fresh_adamw, betas=0.9), ("betas", "pair")),
    case("AdamW", "betas three numbers", call(fresh_adamw, betas=(0.9, 0.99, 0.999)), ("betas", "pair")),
    case("AdamW", "params a list", call(AdamW, [np.zeros(2)]), ("params", "dict")),
    case("AdamW", "params of ints", call(AdamW, {"W": np.zeros(2, int)}), ("params['W']", "float")),
    case("AdamW.step", "lr a string", call(stepped, "1e-3"), ("lr",)),
    case("clip_grad_norm", "grads a list", call(clip_grad_norm, [np.ones(2)], 1.0), ("grads", "dict")),
    case("TrainingConfig", "batch_size 3.0", call(TrainingConfig, batch_size=3.0), ("batch_size", "integer")),
    case("TrainingConfig", "blas_threads True", call(TrainingConfig, blas_threads=True), ("blas_threads",)),
    case("TrainingConfig.total_steps", "n_sequences 2.5", call(TrainingConfig().total_steps, 2.5),
         ("n_sequences",)),
    case("evaluate", "model an Encoder", call(evaluate, uses.encoder, BATCH), ("model", "MaskedLM")),
    case("train_mlm", "model an Encoder", call(train_mlm, uses.encoder, uses.schedule),
         ("model", "MaskedLM")),
    case("train_mlm", "schedule a batch", call(train_mlm, uses.word_mlm, BATCH),
         ("schedule", "MaskingSchedule")),
    case("train_mlm", "config a dict", call(train_mlm, uses.word_mlm, uses.schedule, {"epochs": 1}),
         ("config", "TrainingConfig")),
    case("train_mlm", "progress a string", call(train_mlm, uses.word_mlm, uses.schedule, progress="print"),
         ("progress",)),
])
def test_an_argument_of_the_wrong_type_is_refused_naming_it(request, entry, names):
    with refused(TypeError, *names):
        run(request, entry)


# Arguments that contradict each other or the model ----------------------------------------------------------
@pytest.mark.parametrize(("entry", "names"), [
    case("AdamW.step", "a gradient missing", call(stepped, 1e-3, {"W": GRADS["W"]}), ("grads", "missing")),
    case("AdamW.step", "a gradient of another shape", call(stepped, 1e-3, GRADS | {"b": np.zeros(3)}),
         ("grads['b']", "shape")),
    case("evaluate", "nothing selected", call(evaluate, uses.mlm, NOTHING_SELECTED), ("nothing to predict",)),
    case("train_mlm", "a schedule beyond the model's vocabulary", call(train_on_30_words, uses.mlm),
         ("vocab_size",)),
    case("train_mlm", "held_out with nothing selected",
         call(train_mlm, uses.word_mlm, uses.schedule,
              held_out=MaskedBatch(np.ones((1, 4), int), np.ones((1, 4), int), np.zeros((1, 4), int),
                                   np.ones((1, 4), int))), ("held_out", "nothing to predict")),
])
def test_arguments_that_contradict_each_other_or_the_model_are_refused_naming_them(request, entry, names):
    with refused(ValueError, *names):
        run(request, entry)


# Right answers ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("entry", "twin"), [
    case("AdamW", "betas as a list of numpy floats", call(betas_of, [np.float32(0.5), np.float64(0.9)]),
         call(betas_of, (0.5, 0.9))),
    case("TrainingConfig", "numpy numbers stored as Python ones",
         call(TrainingConfig, epochs=np.int64(2), batch_size=np.int32(4), lr=np.float32(0.5),
              seed=np.uint8(3)),
         call(TrainingConfig, epochs=2, batch_size=4, lr=0.5, seed=3)),
])
def test_numbers_of_other_types_are_read_as_the_python_numbers_they_equal(entry, twin):
    assert_python_twin(entry(), twin())


@pytest.mark.parametrize(("entry", "expected"), [
    case("AdamW.step", "lr 0 leaves the weights", call(stepped, 0.0), PARAMS),
    case("AdamW.step", "lr np.float32(1e-3): one Adam step moves each weight by about lr",
         call(stepped, np.float32(1e-3)),
         {"W": np.full((2, 2), 1 - LR_32 * 0.01 - ADAM_MOVE), "b": np.full(2, -ADAM_MOVE)}),
    case("clip_grad_norm", "norm 1 clipped to 0.5", call(clipped, {"W": [0.6, 0.8]}, 0.5),
         (1.0, {"W": np.array([0.3, 0.4])})),
    case("learning_rate", "step total + 1 (torch's LambdaLR asks for it): zero",
         call(learning_rate, 11, 10, 1e-3, 2), 0.0),
    case("learning_rate", "no warm-up: decaying from step 1, peak T / (T + 1)",
         call(learning_rate, 1, 10, 1.0, 0),
         10 / 11),
    case("learning_rate", "warmup = total: linear to the peak", call(learning_rate, 10, 10, 1.0, 10), 1.0),
    case("TrainingConfig", "weight_decay 0", call(weight_decay_of, 0), 0.0),
])
def test_an_edge_value_gets_its_closed_form(entry, expected):
    assert_same(entry(), expected)


@pytest.mark.parametrize("config", [
    case("train_mlm", "one epoch: the untrained model's loss on the epoch's masks, the weights moved",
         TrainingConfig(batch_size=2))])
def test_one_epoch_in_one_batch_records_the_untrained_loss_and_moves_the_weights(word_mlm, schedule, config):
    model = MaskedLM(word_mlm.config, seed=1)
    before = {k: v.copy() for k, v in model.parameters().items()}
    result = train_mlm(model, schedule, config)
    assert result.train_loss == [pytest.approx(MaskedLM(word_mlm.config, seed=1).loss(schedule.masks(0)),
                                               rel=1e-12)]
    after = model.parameters()
    assert all(np.isfinite(p).all() for p in after.values())
    assert not np.array_equal(after["mlm_head.W"], before["mlm_head.W"])


@pytest.mark.parametrize(("entry", "whole"), [
    case("evaluate", "in chunks of one row: the whole batch's loss", call(evaluate, uses.mlm, BATCH, 1),
         call(MaskedLM.loss, uses.mlm, BATCH)),
])
def test_a_loss_evaluated_in_chunks_is_the_whole_batchs(request, entry, whole):
    assert_same(run(request, entry), run(request, whole))
