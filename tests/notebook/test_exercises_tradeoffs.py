"""The trade-offs chapter's checkers: right answers pass, known slips get their hint, bad input is refused."""

import numpy as np
import pytest

from geron_lib import EncoderConfig, count_parameters
from geron_lib.model.flops import approximate_flops_per_token, flops_per_token
from geron_lib.model.training_memory import training_memory
from geron_lib.notebook.exercises.tradeoffs import (
    check_least_loss_per_parameter,
    check_rule_of_thumb_ratio,
    check_sharing_memory_saving,
    rule_of_thumb_ratio,
    sharing_memory_saving,
)


def _grid(all_loss, ffn_loss):
    runs = [{"E": 64, "sharing": s, "seed": 0, "parameters": n, "held_out_loss": [loss]}
            for s, n, loss in (("none", 400_000, 5.0), ("all", 100_000, all_loss),
                               ("ffn", 200_000, ffn_loss))]
    return {"setup": {"hidden_size": 64}, "runs": runs}


def test_cheapest_sharing_is_judged_per_parameter_saved():
    # 'all' loses 0.3 nats for 0.3M saved (1 per million); 'ffn' 0.1 for 0.2M (0.5 per million)
    grid = _grid(5.3, 5.1)
    assert check_least_loss_per_parameter("ffn", 64, grid)
    verdict = check_least_loss_per_parameter("all", 64, grid)
    assert not verdict and "by the parameters it saves" in verdict.message
    # the same losses but a cheaper 'all': now sharing everything is the better buy
    assert check_least_loss_per_parameter("all", 64, _grid(5.12, 5.1))
    for wrong in ("attention", ..., 3, None):
        verdict = check_least_loss_per_parameter(wrong, 64, grid)
        assert not verdict and "should be one of ['all', 'ffn']" in verdict.message


def test_cheapest_sharing_on_the_stored_grid_agrees_with_the_study():
    from geron_lib.studies.tradeoffs import load_stored, loss_per_parameter_saved
    costs = loss_per_parameter_saved(load_stored(), 64)
    assert check_least_loss_per_parameter(min(costs, key=costs.get), 64)
    with pytest.raises(ValueError, match="E = 48 has no not-shared and shared runs"):
        check_least_loss_per_parameter("all", 48)


def test_memory_share_by_hand_and_its_slip():
    base = EncoderConfig.preset("albert-base-v2")
    M = {s: training_memory(base.replace(sharing=s), 256, 128, dtype=np.float32).total
         for s in ("all", "none")}
    saved = 16 * (count_parameters(base.replace(sharing="none"), mlm_head=False).total
                  - count_parameters(base, mlm_head=False).total)
    assert M["none"] - M["all"] == saved  # four float32 numbers per parameter saved
    share = 1 - M["all"] / M["none"]
    assert sharing_memory_saving("albert-base-v2", 256, 128) == pytest.approx(share)
    assert check_sharing_memory_saving(share, 256)
    assert sharing_memory_saving("albert-base-v2", 32, 128) > 4 * share  # activations grow with B
    slip = check_sharing_memory_saving(sharing_memory_saving("albert-base-v2", 32, 128), 256)
    assert not slip and "That is the share at batch 32" in slip.message
    other = check_sharing_memory_saving(0.5, 256)
    assert not other and "activations the backward pass keeps" in other.message
    assert not check_sharing_memory_saving(..., 256)


def test_rule_of_thumb_ratio_and_its_inverse():
    xlarge = EncoderConfig.preset("albert-xlarge-v2")
    ratio = 3 * flops_per_token(xlarge, 512) / approximate_flops_per_token(xlarge, 512, training=True)
    assert rule_of_thumb_ratio("albert-xlarge-v2", 512) == pytest.approx(ratio)
    assert check_rule_of_thumb_ratio(ratio, "albert-xlarge-v2", 512)
    inverse = check_rule_of_thumb_ratio(1 / ratio, "albert-xlarge-v2", 512)
    assert not inverse and "That is the inverse" in inverse.message
    assert rule_of_thumb_ratio("bert-base", 512) == pytest.approx(1, abs=0.01)  # unshared: the rule holds


@pytest.mark.parametrize("call, error, match", [
    (lambda: check_sharing_memory_saving(0.1, 0), ValueError, "batch must be at least 1"),
    (lambda: check_sharing_memory_saving(0.1, 32, preset="gpt-2"), ValueError, "name must be one of"),
    (lambda: check_rule_of_thumb_ratio(5.0, "albert-base-v2", 0), ValueError, "seq_len must be at least 1"),
    (lambda: check_least_loss_per_parameter("all", 0), ValueError, "E must be at least 1"),
    (lambda: check_least_loss_per_parameter("all", 64, {"runs": []}), TypeError, "result must be a grid"),
])
def test_bad_arguments_are_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()
