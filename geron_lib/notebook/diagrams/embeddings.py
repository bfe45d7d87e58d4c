"""Chapter 1's picture, which appendix A1 shows too: ALBERT's embedding path (:func:`embedding_diagram`),
the tables at width E, their layer norm and the projection W_P up to H, with their parameter counts."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from ...config import EncoderConfig
from ...costs.params import count_parameters
from ...validate import check_type
from .canvas import LABEL, ROLE, SMALL, Canvas, arrow, box, count_text, text, title


def embedding_diagram(config: EncoderConfig, *, ax: Axes | None = None) -> tuple[Figure, str]:
    """Embeddings <- config: token ids -> V x E table, + positions (P x E) + token types, LN at width E,
    then W_P (E x H + bias) when ``config.has_embedding_projection``, each with its parameter count."""
    check_type("config", config, EncoderConfig)
    c = Canvas(ax, "embedding")
    V, E, H, P, types = (config.vocab_size, config.E, config.hidden_size, config.max_position_embeddings,
                         config.type_vocab_size)
    counts = count_parameters(config)
    width = c.width
    title(c, f"Embeddings at E = {E}, H = {H}")
    rows = (2.25, 1.4, 0.55) if types else (1.85, 0.95)
    tables = [("token_table", "token table", f"V x E = {V} x {E}", counts.token_embeddings,
               "token ids (B, T)"),
              ("position_table", "position table", f"P x E = {P} x {E}", counts.position_embeddings,
               "positions (T,)")]
    if types:
        tables.append(("type_table", "token-type table", f"{types} x {E}", counts.token_type_embeddings,
                       "token types (B, T)"))
    x_tab, x_plus, x_ln, x_proj, x_out = 2.7, 4.05, 5.05, 6.7, 8.25
    y = 1.4
    narrow = E / H  # arrow widths: the path is as wide as the vectors it carries
    for (name, label, detail, count, source), y_row in zip(tables, rows, strict=True):
        text(c, f"{name}_input", (1.6, y_row), source, SMALL, ha="right", va="center")
        arrow(c, (1.65, y_row), (x_tab - 0.9, y_row))
        box(c, name, (x_tab, y_row), (1.8, 0.75), ROLE["embedding"], label, detail, count)
        arrow(c, (x_tab + 0.9, y_row), (x_plus - 0.17 * (1 if y_row == y else 0.7),
                                            y + 0.12 * (y_row > y) - 0.12 * (y_row < y)), name,
              thickness=narrow)
    c.patch("box-plus", Circle, center=(x_plus, y), radius=0.17, edgecolor="#444444", linewidth=1.2)
    c.text("label-plus", (x_plus, y), "+", fontsize=LABEL + 2, ha="center")
    box(c, "LN", (x_ln, y), (1.3, 0.75), ROLE["norm"], "layer norm", f"width E = {E}",
        counts.embedding_layer_norm)
    arrow(c, (x_plus + 0.17, y), (x_ln - 0.65, y), "to_LN", thickness=narrow)
    if config.has_embedding_projection:
        box(c, "W_P", (x_proj, y), (1.6, 0.75), ROLE["projection"], "$W_P$, bias",
            f"E x H = {E} x {H}", counts.embedding_projection)
        arrow(c, (x_ln + 0.65, y), (x_proj - 0.8, y), "to_W_P", thickness=narrow)
        arrow(c, (x_proj + 0.8, y), (x_out - 0.65, y), "to_hidden", thickness=1.0)
        step = f"then the projection W_P, b ({E} x {H} plus bias, {counts.embedding_projection:,} parameters)"
    else:
        arrow(c, (x_ln + 0.65, y), (x_out - 0.65, y), "to_hidden", thickness=narrow)
        text(c, "no_projection", ((x_ln + x_out) / 2 + 0.0, y - 0.2), f"E = H = {H}:\nno projection", SMALL,
             ha="center", va="top", color="#555555", style="italic")
        step = "and no projection, since E = H"
    box(c, "hidden", (x_out, y), (1.3, 0.75), ROLE["input"], "hidden states", f"(B, T, {H})",
        fill="#F2F2F2")
    count_text(c, "embeddings", (width - 0.1, 0.2), f"embeddings in all: {counts.embeddings:,}", LABEL,
               ha="right", va="center")
    types_alt = (f", plus a {types} x {E} token-type table ({counts.token_type_embeddings:,})" if types
                 else "")
    alt = (f"The embedding path at V = {V}, E = {E}, H = {H}: token ids look up a V x E = {V} x {E} table "
           f"({counts.token_embeddings:,} parameters), plus a P x E = {P} x {E} position table "
           f"({counts.position_embeddings:,}){types_alt}; the sum is layer-normalised at width E = {E} "
           f"({counts.embedding_layer_norm:,}), {step}, giving hidden states (B, T, {H}). "
           f"The embeddings hold {counts.embeddings:,} parameters.")
    return c.done(alt)
