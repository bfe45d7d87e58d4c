"""Median time of one slider update of the chapters' explorers: the counts, the redraw (the charts and the
diagram panel) and the PNG render a reader's move costs. Target: at most 100 ms for the d_embed (E) slider
of the factorised-embedding explorer and for the E slider of the budget explorer (trade-offs chapter) on the
book's 2-core machine; the sharing explorer's L slider and the heads explorer's h slider are timed beside
them, in the same rounds.

    .venv/bin/python benchmarks/bench_slider.py [updates] [--cpu]

Wall time by default (what a reader waits); ``--cpu`` measures this process's CPU time instead, which other
jobs on a shared machine disturb less.
"""

import itertools
import statistics
import sys
import time

import numpy as np

from geron_lib.notebook.widgets.attention import heads_explorer
from geron_lib.notebook.widgets.budget import EMBEDDING_SIZES, budget_explorer
from geron_lib.notebook.widgets.embeddings import embedding_explorer
from geron_lib.notebook.widgets.sharing import DEPTHS, TIMING_CONFIG, sharing_explorer
from geron_lib.timing import sample_seconds

TARGET_MS = 100.0


def _updates(explorer, name, values):
    """One move of slider ``name`` (cycling through ``values``) and the PNG it shows."""
    values = itertools.cycle(values)

    def update():
        explorer.set(**{name: next(values)})  # count + redraw
        explorer.png()  # render

    explorer.png()  # warm-up: fonts, tick machinery
    return update


def main(updates: int = 60, clock=time.perf_counter) -> None:
    # the sharing explorer's time panel is measured once in the chapter; its values do not change the
    # cost of an update, so made-up linear ones stand in for them here
    timings = {"depths": DEPTHS, "config": TIMING_CONFIG, "seq_len": 64,
               "seconds": {m: np.array(DEPTHS) * 1e-3 * k for k, m in
                           enumerate(("none", "all", "attention", "ffn"), 1)}}
    sliders = {
        # every E the slider offers at H = 768 (its maximum follows H), in a stride
        "E (embedding explorer)": _updates(embedding_explorer(), "E",
                                           itertools.islice(itertools.cycle(range(16, 769, 16)), 0, 336, 7)),
        "L (sharing explorer)": _updates(sharing_explorer(timings), "L", DEPTHS),
        "h (heads explorer)": _updates(heads_explorer(), "h", (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)),
        # every E the slider offers at H = 768 (larger E is taken as H)
        "E (budget explorer)": _updates(budget_explorer(), "E", EMBEDDING_SIZES),
    }
    samples = sample_seconds(sliders, repeat=updates, min_seconds=1e-9, clock=clock)
    what = "CPU time" if clock is time.process_time else "wall time"
    for name, seconds in samples.items():
        times = [1e3 * t for t in seconds]
        median = statistics.median(times)
        verdict = (f"; target {TARGET_MS:.0f} ms: {'met' if median <= TARGET_MS else 'NOT met'}"
                   if name.startswith("E ") else "")
        print(f"{name} slider update (count + redraw + PNG), {what}, {updates} updates: "
              f"median {median:.1f} ms, min {min(times):.1f} ms, max {max(times):.1f} ms{verdict}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    main(int(args[0]) if args else 60, time.process_time if "--cpu" in sys.argv[1:] else time.perf_counter)
