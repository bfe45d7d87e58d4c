"""Chapter 4's picture: masking timelines (:func:`masking_timeline_diagram`), the masking each epoch uses
under the static, duplicated and dynamic schedules, and how many maskings each sequence gets."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...pretraining.masking import SCHEDULES, draws_per_sequence, mask_index
from ...validate import check_int
from .canvas import LABEL, SMALL, Canvas, count_text, head_colour, plural, text, tint, title

#: The most epochs a masking timeline shows (one column each, wide enough for a two-digit label).
MAX_DRAWN_EPOCHS = 30
SCHEDULE_LABELS = {"static": "static", "duplicated": "static x {k}", "dynamic": "dynamic"}


def masking_timeline_diagram(epochs: int = 8, copies: int = 3, *, ax: Axes | None = None
                             ) -> tuple[Figure, str]:
    """m(e) = 0 (static),  e mod k (static x k),  e (dynamic): the masking each epoch e uses, as rows of
    epochs, with the maskings each sequence gets (:func:`geron_lib.pretraining.masking.mask_index`)."""
    epochs = check_int("epochs", epochs, minimum=1)
    if epochs > MAX_DRAWN_EPOCHS:
        raise ValueError(f"epochs must be at most {MAX_DRAWN_EPOCHS} (one readable column each), got "
                         f"{epochs}")
    copies = check_int("copies", copies, minimum=1)
    c = Canvas(ax, "masking_timeline")
    width = c.width
    title(c, f"The masking m(e) each epoch e uses: {plural(epochs, 'epoch')}, k = {copies}")
    left, right = 1.2, 7.75
    pitch = (right - left) / epochs
    cell = min(pitch - 0.015, 0.6)
    text(c, "epoch", (0.1, 1.42), "epoch e", SMALL, ha="left", va="center")
    for e in range(epochs):
        text(c, f"epoch{e}", (left + (e + 0.5) * pitch, 1.42), str(e), SMALL, ha="center", va="center")
    alt_rows = []
    for schedule, y in zip(SCHEDULES, (1.1, 0.7, 0.3), strict=True):
        label = SCHEDULE_LABELS[schedule].format(k=copies)
        text(c, schedule, (0.1, y), label, LABEL, ha="left", va="center")
        used = [mask_index(e, schedule, copies) for e in range(epochs)]
        for e, m in enumerate(used):
            x = left + (e + 0.5) * pitch
            c.patch(f"box-{schedule}_e{e}", Rectangle, xy=(x - cell / 2, y - 0.16), width=cell, height=0.32,
                    facecolor=tint(head_colour(m), 0.5), edgecolor="white", linewidth=0.5)
            c.text(f"label-{schedule}_e{e}", (x, y), str(m), ha="center")
        drawn = draws_per_sequence(epochs, schedule, copies)
        count_text(c, f"{schedule}_draws", (width - 0.1, y), plural(drawn, "masking"),
                   SMALL, ha="right", va="center")
        alt_rows.append(f"{label} uses masking{'s' if len(set(used)) > 1 else ''} "
                        f"{', '.join(map(str, used))} ({drawn} in all)")
    alt = (f"Over {plural(epochs, 'epoch')} (e = 0 to {epochs - 1}), the masking each epoch uses: "
           + "; ".join(alt_rows) + ".")
    return c.done(alt)
