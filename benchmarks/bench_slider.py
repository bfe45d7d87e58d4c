"""Median time of one d_embed (E) slider update of the factorised-embedding explorer: the counts, the
redraw and the PNG render a reader's move costs. Target: at most 100 ms on the book's 2-core machine.

    .venv/bin/python benchmarks/bench_slider.py [updates]
"""

import itertools
import statistics
import sys
import time

from geron_lib.notebook.widgets.embeddings import embedding_explorer
from geron_lib.timing import sample_seconds

TARGET_MS = 100.0


def main(updates: int = 60) -> None:
    explorer = embedding_explorer()
    explorer.png()  # warm-up: fonts, tick machinery
    values = itertools.cycle(16 * k for k in range(1, 65))  # every E the slider offers, in a stride
    values = itertools.islice(values, 0, None, 7)

    def update():
        explorer.set(E=next(values))  # count + redraw
        explorer.png()  # render

    times = [1e3 * t for t in sample_seconds({"update": update}, repeat=updates, min_seconds=1e-9,
                                             clock=time.perf_counter)["update"]]
    median = statistics.median(times)
    print(f"E slider update (count + redraw + PNG), {updates} updates: median {median:.1f} ms, "
          f"min {min(times):.1f} ms, max {max(times):.1f} ms; target {TARGET_MS:.0f} ms: "
          f"{'met' if median <= TARGET_MS else 'NOT met'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
