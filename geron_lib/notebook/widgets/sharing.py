"""The cross-layer sharing explorer: sliders for depth and hidden size and a sharing-mode choice drive the
parameter count against depth for every mode, beside the forward time against depth, measured once, above
the layers drawn with the sublayers they share (:func:`geron_lib.notebook.diagrams.sharing_diagram`)."""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import MaxNLocator

from ...config import SHARING, EncoderConfig
from ...studies.depth import forward_time_by_sharing, params_by_depth
from ...validate import check_choice, check_int
from ..diagrams.canvas import SIZES, SMALL
from ..diagrams.sharing import sharing_diagram
from ..explorer import Explorer
from ..plots import PALETTE
from .embeddings import CHARTS_HEIGHT, HIDDEN_SIZES, WIDTH, albert_style, two_panels

DEPTHS = (1, 2, 3, 4, 6, 8, 12, 16, 24)
COLOURS = dict(zip(SHARING, (PALETTE[0], PALETTE[5], PALETTE[6], PALETTE[3]), strict=True))
#: The small model whose forward pass is timed (the time's shape against depth is the point, not its size).
TIMING_CONFIG = EncoderConfig(vocab_size=1000, hidden_size=128, num_attention_heads=4, intermediate_size=512,
                              max_position_embeddings=128)


def measure_timings(config: EncoderConfig = TIMING_CONFIG, *, seq_len: int = 64, repeats: int = 7,
                    seed: int = 0) -> dict:
    """Median forward seconds (CPU time, one BLAS thread) at every depth of :data:`DEPTHS`, for every
    sharing mode, the modes timed side by side (:func:`~geron_lib.studies.depth.forward_time_by_sharing`),
    with the sizes."""
    seconds = forward_time_by_sharing(config, DEPTHS, seq_len=seq_len, repeats=repeats, seed=seed)
    return {"depths": DEPTHS, "seconds": seconds, "config": config, "seq_len": seq_len}


def sharing_numbers(L: int, H: int, sharing: str, timings: dict) -> dict:
    """Every number the explorer plots for one setting: counts at depth L, per-layer sizes, time at L."""
    counts = params_by_depth(albert_style(30000, H, 128), [1, 2, L])
    one, two, at_L = (dict(zip(SHARING, col, strict=True)) for col in zip(*counts.values(), strict=True))
    return {"L": L, "H": H, "sharing": sharing, "params": at_L,
            "per_layer": {m: two[m] - one[m] for m in SHARING},  # what one more layer adds
            "seconds": float(timings["seconds"][sharing][timings["depths"].index(L)])}


def _draw_axes(fig, timings):
    left, right, diagram = two_panels(fig, "sharing")
    depths = timings["depths"]
    for mode in SHARING:
        left.plot([], [], color=COLOURS[mode], label=mode)
        right.plot(depths, np.asarray(timings["seconds"][mode]) * 1e3, "o-", ms=3, color=COLOURS[mode],
                   label=mode)
    left.plot([], [], "o", ms=8, color=PALETTE[0])
    right.plot([], [], "o", ms=8, color=PALETTE[0])
    c, T = timings["config"], timings["seq_len"]
    left.set(xlabel=r"layers $L$", ylabel="parameters (millions)")
    right.set(xlabel=r"layers $L$", ylabel="forward pass, CPU time (ms)",
              title=f"measured: H = {c.hidden_size}, F = {c.intermediate_size}, T = {T},\nfloat32, "
                    "1 thread")
    right.title.set_fontsize(SMALL)
    left.legend(title="sharing", loc="upper left")
    for ax in (left, right):
        ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(5))
    right.set_ylim(0, max(max(s) for s in timings["seconds"].values()) * 1e3 * 1.1)
    return left, right, diagram


@functools.lru_cache(maxsize=16)
def _curves(H: int, max_depth: int) -> dict[str, list[int]]:
    """Parameters at every depth 1 .. max_depth for every mode: counted once per H, reused while L moves."""
    return params_by_depth(albert_style(30000, H, 128), range(1, max_depth + 1))


def _plot(fig, timings, L, H, sharing) -> dict:
    d = sharing_numbers(L, H, sharing, timings)
    left, right, diagram = fig.axes if fig.axes else _draw_axes(fig, timings)
    x = np.arange(1, max(timings["depths"]) + 1)
    curves = _curves(H, int(x[-1]))
    for line, m in zip(left.lines, SHARING, strict=False):
        line.set_data(x, np.asarray(curves[m]) / 1e6)
        line.set_linewidth(3 if m == sharing else 1.2)
    for line, m in zip(right.lines, SHARING, strict=False):
        line.set_linewidth(3 if m == sharing else 1.2)
    left.lines[-1].set_data([L], [d["params"][sharing] / 1e6])
    right.lines[-1].set_data([L], [d["seconds"] * 1e3])
    left.set_title(f"H = {H}, E = 128, sharing {sharing!r}:\n{d['params'][sharing] / 1e6:,.1f}M at L = {L}",
                   fontsize=SMALL)
    left.set_xlim(0, x[-1] + 1)
    left.set_ylim(0, max(curves["none"]) / 1e6 * 1.1)
    sharing_diagram(albert_style(30000, H, 128).replace(num_hidden_layers=L, sharing=sharing), ax=diagram)
    return d


def sharing_explorer(timings: dict | None = None, *, L: int = 12, H: int = 768,
                     sharing: str = "all") -> Explorer:
    """Sliders for L and H and a sharing-mode choice; ``timings`` from :func:`measure_timings` (measured
    now when None). The plotted numbers are in ``.data`` (see :func:`sharing_numbers`)."""
    if check_int("L", L, minimum=1) not in DEPTHS:
        raise ValueError(f"L must be one of the slider's depths {DEPTHS}, got {L}")
    if check_int("H", H, minimum=1) not in HIDDEN_SIZES:
        raise ValueError(f"H must be one of the slider's values {HIDDEN_SIZES}, got {H}")
    check_choice("sharing", sharing, SHARING)
    if timings is None:
        timings = measure_timings()
    elif not isinstance(timings, dict) or tuple(timings.get("depths", ())) != DEPTHS:
        raise ValueError(f"timings must come from measure_timings() (depths {DEPTHS})")
    style = {"description_width": "initial"}
    controls = {
        "L": widgets.SelectionSlider(options=DEPTHS, value=L, description="L (layers)", style=style),
        "H": widgets.SelectionSlider(options=HIDDEN_SIZES, value=H, description="H (hidden)", style=style),
        "sharing": widgets.Dropdown(options=SHARING, value=sharing, description="sharing", style=style),
    }

    def plot(fig, L, H, sharing):
        return _plot(fig, timings, L, H, sharing)

    return Explorer(controls, plot, width=WIDTH, height=CHARTS_HEIGHT + SIZES["sharing"][1],
                    alt="Parameters against depth for every sharing mode, and measured forward time "
                        "against depth, above the L layers drawn pointing at the attention and feed-forward "
                        "sublayers the encoder stores under that sharing mode")
