"""The masking explorer: one sentence's selected positions, epoch by epoch, under each masking schedule,
with sliders for the epoch reached and for mask_prob."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from ...model.mlm import KEPT, MASKED, NOT_SELECTED, RANDOM
from ...pretraining import corpus
from ...pretraining.masking import SCHEDULES, MaskingSchedule
from ...pretraining.tokenizer import WordTokenizer, split_words
from ...validate import check_int
from ..diagrams.canvas import SMALL
from ..explorer import Explorer
from ..plots import PALETTE

MASK_PROBS = (0.1, 0.15, 0.3, 0.5)
NOT_YET = 4  # an epoch not reached yet
COLOURS = {NOT_SELECTED: "#FFFFFF", MASKED: PALETTE[5], RANDOM: PALETTE[1], KEPT: PALETTE[3],
           NOT_YET: "#E8E8E8"}
NAMES = {MASKED: "[MASK]", RANDOM: "random word", KEPT: "kept"}


def default_sentence() -> str:
    """The corpus's first sentence of twelve words."""
    return next(s for s in corpus.load() if len(split_words(s)) == 12)


def schedule_decisions(sentence: str, tokenizer: WordTokenizer, *, mask_prob: float, epochs: int,
                       copies: int, seed: int) -> dict[str, np.ndarray]:
    """Per schedule, what happened to each word of ``sentence`` in each epoch: (epochs, words) codes."""
    ids = tokenizer.encode_batch([sentence], len(tokenizer.encode(sentence)))
    out = {}
    for name in SCHEDULES:
        schedule = MaskingSchedule(ids, tokenizer, name, mask_prob=mask_prob, copies=copies, rng=seed)
        out[name] = np.stack([schedule.masks(e).decision[0, 1:-1] for e in range(epochs)])  # no [CLS], [SEP]
    return out


def masking_explorer(sentence: str | None = None, *, epochs: int = 8, copies: int = 3,
                     seed: int = 0) -> Explorer:
    """Sliders: ``epoch`` (how many epochs have passed) and ``mask_prob``; one panel per schedule."""
    sentence = default_sentence() if sentence is None else sentence
    epochs = check_int("epochs", epochs, minimum=1)
    copies = check_int("copies", copies, minimum=1)
    tokenizer = WordTokenizer.from_texts(corpus.load())
    words = split_words(sentence)
    if not words:
        raise ValueError("sentence has no word to mask")
    decisions = {p: schedule_decisions(sentence, tokenizer, mask_prob=p, epochs=epochs, copies=copies,
                                       seed=seed) for p in MASK_PROBS}
    labels = {"static": "static", "duplicated": f"static x {copies}", "dynamic": "dynamic"}
    cmap = ListedColormap([COLOURS[k] for k in sorted(COLOURS)])

    def draw(fig):
        fig.set_layout_engine("none")  # fixed margins: a layout engine would re-solve on every frame
        axes = fig.subplots(len(SCHEDULES), 1, sharex=True,
                            gridspec_kw=dict(left=0.07, right=0.77, top=0.94, bottom=0.16, hspace=0.35))
        for ax in axes:
            ax.imshow(np.zeros((epochs, len(words))), cmap=cmap, vmin=-0.5, vmax=NOT_YET + 0.5, aspect="auto")
            ax.grid(visible=False)
            ax.hlines(np.arange(epochs + 1) - 0.5, -0.5, len(words) - 0.5, color="#999999", lw=0.5)
            ax.vlines(np.arange(len(words) + 1) - 0.5, -0.5, epochs - 0.5, color="#999999", lw=0.5)
            ax.set_yticks(range(epochs), [str(e + 1) if e % 2 == 0 else "" for e in range(epochs)])
            ax.set_ylabel("epoch")
        axes[-1].set_xticks(range(len(words)), words, rotation=40, ha="right")
        fig.legend(handles=[Patch(color=COLOURS[k], label=NAMES[k]) for k in NAMES], loc="upper right",
                   title="selected, became")
        return axes

    def plot(fig, epoch, mask_prob) -> dict:
        axes = fig.axes[: len(SCHEDULES)] if fig.axes else draw(fig)
        data = {"epoch": epoch, "mask_prob": mask_prob, "selected": {}, "distinct": {}}
        for ax, name in zip(axes, SCHEDULES, strict=True):
            shown = decisions[mask_prob][name].copy()
            shown[epoch:] = NOT_YET
            ax.images[0].set_data(shown)
            seen = decisions[mask_prob][name][:epoch] != NOT_SELECTED
            data["selected"][name] = [np.flatnonzero(row).tolist() for row in seen]
            data["distinct"][name] = len({row.tobytes() for row in seen})
            n = data["distinct"][name]
            ax.set_title(f"{labels[name]}: {n} distinct mask{'s' if n > 1 else ''} in {epoch} epoch"
                         f"{'s' if epoch > 1 else ''}", fontsize=SMALL, loc="left")
        return data

    controls = {"epoch": widgets.IntSlider(value=epochs, min=1, max=epochs, description="epoch"),
                "mask_prob": widgets.SelectionSlider(options=MASK_PROBS, value=0.15, description="mask_prob")}
    return Explorer(controls, plot, width=7.5, height=5.2,
                    alt=f"Which words of '{sentence}' are selected in each epoch under static, static x "
                        f"{copies} and dynamic masking")
