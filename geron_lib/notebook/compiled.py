"""What the page "Does the compiler batch the heads?" shows of the compiled JAX attention forms: the products
left in every program as one table, the dot instructions of one program, the versions that compiled them
in one line, and their times beside the numpy kernels' in one figure. The programs and their versions come
in from :mod:`geron_lib.interop.jax_programs`, their products from :mod:`geron_lib.studies.compiled_heads`,
the times from :mod:`geron_lib.studies.jax_timing`; nothing here compiles or times anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..studies.compiled_heads import program_kind
from ..validate import check_int, check_type
from .plots import PALETTE, new_figure

#: The series of the times figure: the key of a ``time_styles`` row, its label, colour and line style.
#: A form written the same way has the same colour in numpy (dashed, open markers) and in JAX (solid).
SERIES = (("numpy loop", "numpy, loop over heads", PALETTE[6], "--"),
          ("numpy batched", "numpy, batched", PALETTE[5], "--"),
          ("jax loop", "JAX jitted, loop over heads", PALETTE[6], "-"),
          ("jax vmap", "JAX jitted, jax.vmap", PALETTE[1], "-"),
          ("jax batched", "JAX jitted, batched", PALETTE[5], "-"))

_DOT = re.compile(r"^\s*(?:ROOT\s+)?(%[\w.\-]+\s*=\s*\w+\[[\d,]*\]\S*\s+dot\(.*)$")
_LAYOUT = re.compile(r"(\[[\d,]*\])\{[^}]*\}")
_NOISE = re.compile(r",\s*(?:metadata|backend_config|frontend_attributes)=.*$")


def product_counts(table: Sequence[Mapping]) -> str:
    """The rows of ``geron_lib.studies.compiled_heads.product_table`` as a table: one line per form, style
    and T, one column per h, each cell the number of products after optimisation (with the number before it
    where optimisation changed it), then what optimisation removed or brought in."""
    check_type("table", table, Sequence)
    rows = [check_type("every row of table", row, Mapping) for row in table]
    if not rows:
        raise ValueError("table must hold at least one row of product_table")
    heads = sorted({row["h"] for row in rows})
    lines, changed = {}, []
    for row in rows:
        cell = f"{row['after']}" + ("" if row["after"] == row["before"] else f" (from {row['before']})")
        lines.setdefault((row["form"], row["style"], row["T"]), {})[row["h"]] = cell
        if row["gone"] or row["new"]:
            changed.append(f"{row['form']} {row['style']} h = {row['h']}, T = {row['T']}")
    shown = [f"h = {heads[-1]}", *(cell for cells in lines.values() for cell in cells.values())]
    width = 2 + max(len(text) for text in shown)
    out = [f"{'form':<8}{'written':<9}{'T':>4}" + "".join(f"{f'h = {h}':>{width}}" for h in heads)]
    for (form, style, T), cells in lines.items():
        out.append(f"{form:<8}{style:<9}{T:>4}" + "".join(f"{cells.get(h, '-'):>{width}}" for h in heads))
    out.append("products optimisation removed or brought in: " + ("; ".join(changed) or "none"))
    return "\n".join(out)


def dot_lines(text: str) -> list[str]:
    """The dot instructions of an optimised HLO program (``compile().as_text()``), in the order it prints
    them, each without its layouts, metadata and backend config: ``%dot.4 = f32[16,128] dot(%p0, %p1), ...``.
    A dot inside a computation that several instructions call is printed once (the count of the products
    that run is :func:`geron_lib.studies.compiled_heads.products`)."""
    if program_kind(text) != "hlo":
        raise ValueError("text must be an optimised HLO program (compile().as_text()), not StableHLO")
    found = (_DOT.match(line) for line in text.splitlines())
    return [_NOISE.sub("", _LAYOUT.sub(r"\1", m.group(1))) for m in found if m]


def versions_line(versions: Mapping[str, str]) -> str:
    """``geron_lib.interop.jax_programs.versions()`` in one line, as it goes beside a figure."""
    check_type("versions", versions, Mapping)
    flags = versions.get("XLA_FLAGS") or "unset"
    return (f"jax {versions['jax']}, jaxlib {versions['jaxlib']}, XLA backend {versions['backend']} "
            f"(platform {versions['platform_version']}, runtime {versions['runtime']}), XLA_FLAGS {flags}")


def times_figure(rows: Mapping[str, Sequence[Mapping]], versions: Mapping[str, str], *, h: int):
    """``(fig, axes)``: milliseconds per call against T, one panel per form of ``rows`` ({form: the rows of
    ``geron_lib.studies.jax_timing.time_styles``}) at ``h`` heads, every series of :data:`SERIES`, both axes
    logarithmic and the same on every panel; the versions under the panels."""
    check_type("rows", rows, Mapping)
    h = check_int("h", h, minimum=1)
    if not rows:
        raise ValueError("rows must map at least one form to its time_styles rows")
    panels = {form: sorted((r for r in form_rows if r["h"] == h), key=lambda r: r["T"])
              for form, form_rows in rows.items()}
    if not all(panels.values()):
        raise ValueError(f"rows must hold, for every form, rows at h = {h}")
    ms = [r[key] * 1e3 for form_rows in panels.values() for r in form_rows for key, *_ in SERIES]
    fig, axes = new_figure(1, len(panels), width=max(6.5, 4.0 * len(panels)), height=3.9)
    axes = list(axes) if len(panels) > 1 else [axes]
    for ax, (form, form_rows) in zip(axes, panels.items(), strict=True):
        T_values = [r["T"] for r in form_rows]
        for key, label, colour, style in SERIES:
            ax.plot(T_values, [r[key] * 1e3 for r in form_rows], style, color=colour, label=label,
                    marker="o", mfc="white" if style == "--" else colour)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(min(ms) / 1.5, max(ms) * 1.5)
        ax.set_xticks(T_values, [str(T) for T in T_values])
        ax.set_title(f"{form} form, $h$ = {h}", fontsize=10)
        ax.set_xlabel("sequence length $T$")
    axes[0].set_ylabel("milliseconds per call (median)")
    axes[0].legend(fontsize=8)
    fig.supxlabel(versions_line(versions), fontsize=8, color="0.3")
    return fig, axes
