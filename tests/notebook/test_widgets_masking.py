"""The masking explorer: each schedule's masks, epoch by epoch, and its frames."""

import re

from figure_checks import scrubber_frames

from geron_lib.notebook.widgets.masking import masking_explorer


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
    assert len(scrubber_frames(html)) == 6 and len(re.findall('type="range"', html)) == 2
