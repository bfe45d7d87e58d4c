"""torch_mlm: a geron_lib MaskedLM exported into transformers' *ForMaskedLM gives the same loss, the same
gradients and, under torch.optim.AdamW, the same steps; a torch loop trains as train_mlm does.

Needs torch and transformers (the hf extra): skipped without them, except in CI (see tests/conftest.py).
"""

import numpy as np
import pytest
from mlm_cases import CONFIGS, TOK, batch, masked_lm

from geron_lib.interop.hf_weights import hf_mlm_names, hf_mlm_state_dict, is_transposed
from geron_lib.pretraining.masking import MaskingSchedule
from geron_lib.pretraining.train import AdamW, TrainingConfig, clip_grad_norm, learning_rate, train_mlm

#: The hf and slow tiers (tests/conftest.py): torch and transformers.
pytestmark = [pytest.mark.hf, pytest.mark.slow]

LOSS_TOLERANCE = 1e-10  # float64; the issue asks for 1e-6
GRAD_TOLERANCE = 1e-10
ADAMW_TOLERANCE = 1e-6


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
