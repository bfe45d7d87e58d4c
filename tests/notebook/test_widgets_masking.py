"""The masking explorer and the chapter's exercise checkers."""

import re

import pytest

from geron_lib.notebook.exercises.masking import (
    check_distinct_masks,
    check_empty_mask_probability,
    check_nsp_head_parameters,
)
from geron_lib.notebook.widgets.masking import masking_explorer
from geron_lib.pretraining.masking import expected_distinct_masks


def test_explorer_shows_each_schedule_and_responds_to_sliders():
    e = masking_explorer(epochs=6, copies=2, seed=1)
    d = e.data
    assert d["epoch"] == 6 and d["mask_prob"] == 0.15
    static, dup, dyn = (d["selected"][k] for k in ("static", "duplicated", "dynamic"))
    assert all(row == static[0] for row in static) and d["distinct"]["static"] == 1
    assert all(dup[i] == dup[i % 2] for i in range(6)) and d["distinct"]["duplicated"] <= 2
    assert dyn[0] == static[0] == dup[0]  # the same first masking
    assert d["distinct"]["dynamic"] == len({tuple(r) for r in dyn})
    e.set(epoch=2, mask_prob=0.5)
    assert len(e.data["selected"]["dynamic"]) == 2
    assert e.fig.axes[2].get_title(loc="left").startswith("dynamic:")
    html = e.scrubber("masks", epoch=[1, 2, 3], mask_prob=[0.15, 0.5]).data
    assert html.count('class="geron-scrub-frame"') == 6 and len(re.findall('type="range"', html)) == 2


def test_exercise_checkers():
    assert check_empty_mask_probability(0.85**8)
    wrong = check_empty_mask_probability(0.15**8)
    assert not wrong and "escapes selection" in wrong.message
    assert check_nsp_head_parameters(768 * 2 + 2)
    assert not check_nsp_head_parameters(768 * 768 + 768)
    assert check_nsp_head_parameters(1024 * 2 + 2, "bert-large")
    exact = expected_distinct_masks(10, 0.15, 40, "duplicated", 10)
    assert check_distinct_masks(round(exact, 2), 10, 0.15, 40, "duplicated")
    assert not check_distinct_masks(40, 10, 0.15, 40, "duplicated")
    with pytest.raises(ValueError, match="preset"):
        check_nsp_head_parameters(1, "gpt2")
