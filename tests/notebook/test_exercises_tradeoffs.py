"""The trade-offs chapter's checkers: right answers pass, known slips get their hint, bad input is refused."""

import numpy as np
import pytest

from geron_lib import EncoderConfig, count_parameters
from geron_lib.costs.flops import approximate_flops_per_token, flops_per_token
from geron_lib.costs.training_memory import training_memory
from geron_lib.notebook.exercises.tradeoffs import (
    check_costlier_saving,
    check_rule_of_thumb_ratio,
    check_sharing_memory_saving,
    rule_of_thumb_ratio,
    saving_costs,
    sharing_memory_saving,
)


def _grid(narrow_loss, shared_loss, seeds=(0.0, 0.0)):
    """The three cells the checker reads, two seeds each: (16, none, 64), (64, none, 64) at 5.0 and
    (64, all, 64), the seeds offset by ``seeds``."""
    runs = [{"E": E, "sharing": s, "H": 64, "seed": i, "held_out_loss": [6.0, loss + offset]}
            for E, s, loss in ((16, "none", narrow_loss), (64, "none", 5.0), (64, "all", shared_loss))
            for i, offset in enumerate(seeds)]
    return {"grid": {"embedding_sizes": [16, 64]}, "runs": runs}


def test_costlier_saving_by_hand():
    grid = _grid(5.4, 5.1, seeds=(0.0, 0.05))  # factorising costs 0.4, sharing 0.1, spread 0.05
    assert saving_costs(grid) == pytest.approx({"factorising": 0.4, "sharing": 0.1, "spread": 0.05})
    verdict = check_costlier_saving("factorising", grid)
    assert verdict and "+0.400" in verdict.message and "not a measurable cost" not in verdict.message
    wrong = check_costlier_saving("sharing", grid)
    assert not wrong and "Compare each difference with the seed spread" in wrong.message
    # sharing cheaper than the spread: the verdict says it is no measurable cost
    assert "Sharing cost no more than the seed spread" in check_costlier_saving(
        "factorising", _grid(5.4, 4.98, seeds=(0.0, 0.05))).message
    # the other way round: sharing is the costlier saving
    assert check_costlier_saving("sharing", _grid(5.1, 5.4))
    for bad in ("all", ..., 3, None):
        verdict = check_costlier_saving(bad, grid)
        assert not verdict and "should be one of ['factorising', 'sharing']" in verdict.message


def test_costlier_saving_on_the_stored_grid_agrees_with_its_runs():
    from geron_lib.studies import context_grid as cg
    stored = cg.load_stored()

    def final(E, sharing):
        return np.mean([r["held_out_loss"][-1] for r in stored["runs"]
                        if (r["E"], r["sharing"], r["H"]) == (E, sharing, 64)])

    factorising, sharing = final(16, "none") - final(64, "none"), final(64, "all") - final(64, "none")
    costs = saving_costs(stored)
    assert costs["factorising"] == pytest.approx(factorising)
    assert costs["sharing"] == pytest.approx(sharing)
    answer = "factorising" if factorising > sharing else "sharing"
    assert check_costlier_saving(answer)


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
    (lambda: check_sharing_memory_saving(0.1, 32, preset="gpt-2"), ValueError, "preset must be one of"),
    (lambda: check_rule_of_thumb_ratio(5.0, "albert-base-v2", 0), ValueError, "seq_len must be at least 1"),
    (lambda: check_costlier_saving("sharing", {"runs": []}), TypeError, "result must be a grid"),
    (lambda: saving_costs({**_grid(5.4, 5.1), "runs": _grid(5.4, 5.1)["runs"][:4]}), ValueError,
     r"no run of \(64, 'all', 64\)"),
])
def test_bad_arguments_are_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()
