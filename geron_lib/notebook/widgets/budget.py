"""The budget explorer: choose E, the sharing mode, L and H of an ALBERT-style encoder and see, against its
BERT-style twin (the same L and H, E = H, nothing shared), what it stores (parameters), what a training step
holds in memory (weights, gradients and Adam moments; activations) and computes (training FLOPs per token,
exact and by the rule of thumb)."""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.ticker import MaxNLocator

from ...config import PRESETS, SHARING, EncoderConfig
from ...costs.flops import approximate_flops_per_token, flops_per_token
from ...costs.params import count_parameters
from ...costs.training_memory import training_memory
from ...validate import check_choice, check_int
from ..diagrams.canvas import SMALL
from ..explorer import Explorer
from ..plots import PALETTE, fixed_layout
from .embeddings import WIDTH

EMBEDDING_SIZES = (16, 32, 64, 128, 256, 512, 768, 1024, 2048, 4096)
HIDDEN_SIZES = (256, 512, 768, 1024, 2048, 4096)
DEPTHS = (1, 2, 4, 6, 12, 24, 48)
#: The training step the memory and FLOPs are of: B sequences of T tokens, 15 % of them predicted, float32.
BATCH, SEQ_LEN, MASKED, ITEMSIZE = 8, 512, 77, 4
COLOURS = dict(zip(SHARING, (PALETTE[0], PALETTE[5], PALETTE[6], PALETTE[3]), strict=True))
#: The rows of the left panel, each this model over its twin: (key in budget_numbers, label).
ROWS = (("parameters", "parameters N"),
        ("parameter_bytes", "weights + gradients\n+ Adam moments"),
        ("activations", "activations and\nworkspace"),
        ("flops", "training FLOPs per\ntoken (exact)"),
        ("rule_of_thumb", "rule of thumb\n6N + 12LTH"))


def budget_config(E: int, sharing: str, L: int, H: int) -> EncoderConfig:
    """ALBERT base's recipe at width H and depth L: V = 30000, heads of 64, FFN 4H, 512 positions; E = H means
    a plain V x H table (no E -> H map)."""
    return PRESETS["albert-base-v2"].replace(hidden_size=H, num_attention_heads=H // 64,
                                             intermediate_size=4 * H, num_hidden_layers=L,
                                             embedding_size=None if E >= H else E, sharing=sharing)


@functools.lru_cache(maxsize=256)
def _costs(config: EncoderConfig) -> dict:
    memory = training_memory(config, BATCH, SEQ_LEN, dtype=np.float32, masked=MASKED)
    return {"parameters": count_parameters(config, mlm_head=True).total,
            "parameter_bytes": memory.parameters, "activations": memory.activations + memory.workspace,
            "memory": memory.total,
            "flops": flops_per_token(config, SEQ_LEN, mlm_head=True, masked=MASKED, training=True),
            "rule_of_thumb": approximate_flops_per_token(config, SEQ_LEN, training=True)}


def budget_numbers(E: int, sharing: str, L: int, H: int) -> dict:
    """Every number the explorer shows for one setting (E above H is taken as H): the model's costs and its
    twin's (see :data:`ROWS`; bytes for a training step of B = 8 sequences of T = 512 tokens, 77 predicted,
    float32)."""
    E = min(E, H)
    config = budget_config(E, sharing, L, H)
    twin = budget_config(H, "none", L, H)
    return {"E": E, "sharing": sharing, "L": L, "H": H, "model": _costs(config), "twin": _costs(twin)}


def _size(value: float, unit: str) -> str:
    """1,234,567 -> '1.23M' (parameters, FLOPs) or bytes -> '1.2 GiB'."""
    if unit == "B":
        for k, name in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
            if value >= 1024**k:
                return f"{value / 1024**k:,.1f} {name}"
        return f"{value:,.0f} B"
    for k, name in ((12, "T"), (9, "G"), (6, "M"), (3, "k")):
        if value >= 10**k:
            return f"{value / 10**k:,.1f}{name}"
    return f"{value:,.0f}"


UNITS = {"parameters": "", "parameter_bytes": "B", "activations": "B", "flops": "", "rule_of_thumb": ""}
HEIGHT = 4.2  # inches: the bars and, above them, a title of two lines


def _draw_axes(fig):
    fixed_layout(fig)
    left = fig.subplots(1, 1, gridspec_kw=dict(left=0.19, right=0.98, bottom=0.65 / HEIGHT,
                                               top=1 - 0.95 / HEIGHT))
    y = np.arange(len(ROWS))[::-1]
    left.barh(y, np.ones(len(ROWS)), height=0.6, color=PALETTE[5])
    left.axvline(1, color=PALETTE[0], ls="--", lw=1)
    for yi in y:
        left.text(0, yi, "", va="center", ha="left", fontsize=SMALL)
    left.set_yticks(y, [label for _, label in ROWS])
    left.set_xlabel("this model / BERT-style twin (dashed: 1)")
    left.set_xlim(0, 1.6)
    left.xaxis.set_major_locator(MaxNLocator(5))
    return left


def _plot(fig, E, sharing, L, H) -> dict:
    d = budget_numbers(E, sharing, L, H)
    left = fig.axes[0] if fig.axes else _draw_axes(fig)
    model, twin = d["model"], d["twin"]
    ratios = [model[key] / twin[key] for key, _ in ROWS]
    for bar, text, (key, _), ratio in zip(left.patches, left.texts, ROWS, ratios, strict=True):
        bar.set_width(ratio)
        bar.set_color(COLOURS[sharing])
        text.set_x(ratio + 0.03)
        text.set_text(f"{_size(model[key], UNITS[key])} / {_size(twin[key], UNITS[key])}")
    left.set_xlim(0, max(2.0, max(ratios) + 1))  # room for the numbers right of the bars
    left.set_title(f"E = {d['E']}, H = {H}, L = {L}, sharing {sharing!r}: {_size(model['parameters'], '')} "
                   f"parameters;\na training step of B = {BATCH} x T = {SEQ_LEN} ({MASKED} predicted), "
                   f"float32: {_size(model['memory'], 'B')}", fontsize=SMALL)
    return d


def budget_explorer(*, E: int = 128, sharing: str = "all", L: int = 12, H: int = 768) -> Explorer:
    """Sliders for E, L and H and a sharing-mode choice. The plotted numbers are in ``.data`` (see
    :func:`budget_numbers`)."""
    for name, value, options in (("E", E, EMBEDDING_SIZES), ("L", L, DEPTHS), ("H", H, HIDDEN_SIZES)):
        if check_int(name, value, minimum=1) not in options:
            raise ValueError(f"{name} must be one of the slider's values {options}, got {value}")
    check_choice("sharing", sharing, SHARING)
    style = {"description_width": "initial"}
    controls = {
        "E": widgets.SelectionSlider(options=EMBEDDING_SIZES, value=E, description="E (embedding)",
                                     style=style),
        "sharing": widgets.Dropdown(options=SHARING, value=sharing, description="sharing", style=style),
        "L": widgets.SelectionSlider(options=DEPTHS, value=L, description="L (layers)", style=style),
        "H": widgets.SelectionSlider(options=HIDDEN_SIZES, value=H, description="H (hidden)", style=style),
    }

    return Explorer(controls, _plot, width=WIDTH, height=HEIGHT,
                    alt="Five horizontal bars, each this model's parameters, parameter memory, "
                        "activation memory, exact training FLOPs per token and the rule-of-thumb FLOPs as a "
                        "fraction of its BERT-style twin (same L and H, E = H, nothing shared)")
