"""What the chapter shows of the compiled JAX programs (geron_lib.notebook.compiled), on hand-made programs
and timing rows with known numbers: the table of products, the dot instructions of one program, the
versions line and the times figure, and their refusals. No jax needed."""

import io

import numpy as np
import pytest
from figure_checks import layout_problems
from program_texts import optimised, programs

from geron_lib.notebook.compiled import SERIES, dot_lines, product_counts, times_figure, versions_line
from geron_lib.studies.compiled_heads import product_table

VERSIONS = {"jax": "0.1.2", "jaxlib": "0.1.3", "backend": "cpu", "platform_version": "cpu",
            "runtime": "pjrt", "XLA_FLAGS": ""}


def test_the_table_has_a_line_per_program_and_a_column_per_h():
    table = product_table(programs({("concat", "loop", 2, 16): 11, ("concat", "loop", 4, 16): 21,
                                    ("concat", "batched", 2, 16): 6, ("concat", "batched", 4, 16): 6}))
    header, loop, batched, changed = product_counts(table).splitlines()
    assert header.split() == ["form", "written", "T", "h", "=", "2", "h", "=", "4"]
    assert loop.split() == ["concat", "loop", "16", "11", "21"]
    assert batched.split() == ["concat", "batched", "16", "6", "6"]
    assert changed == "products optimisation removed or brought in: none"


def test_the_table_says_where_optimisation_changed_the_products():
    table = product_table(programs({("sum", "loop", 2, 4): (10, 12), ("sum", "vmap", 1, 4): 5}))
    lines = product_counts(table).splitlines()
    assert lines[1].split() == ["sum", "loop", "4", "-", "12", "(from", "10)"]  # no h = 1 program: "-"
    assert lines[-1] == "products optimisation removed or brought in: sum loop h = 2, T = 4"


def test_the_dot_lines_are_the_programs_dots_without_layouts_or_metadata():
    lines = dot_lines(optimised(3))
    assert lines == [f"%dot.{i} = f32[4,8] dot(%x, %w), lhs_contracting_dims={{1}}, "
                     "rhs_contracting_dims={0}" for i in range(3)]


def test_the_versions_line_names_every_version_and_the_flags():
    assert versions_line(VERSIONS) == ("jax 0.1.2, jaxlib 0.1.3, XLA backend cpu (platform cpu, "
                                       "runtime pjrt), XLA_FLAGS unset")
    assert versions_line(VERSIONS | {"XLA_FLAGS": "--xla_cpu_x=1"}).endswith("XLA_FLAGS --xla_cpu_x=1")


def _drawn(fig):
    """``fig`` after drawing it as the page does (the layout engine places the axes then)."""
    fig.savefig(io.BytesIO(), format="png")
    return fig


def _rows(form: str, scale: float) -> list[dict]:
    """time_styles rows at h 4 (and one at h 8, which the figure must leave out), T 4 and 64."""
    rows = []
    for h, T in ((4, 4), (4, 64), (8, 4)):
        rows.append({"form": form, "T": T, "h": h} | {key: scale * (i + 1) * T * 1e-6
                                                      for i, (key, *_) in enumerate(SERIES)})
    return rows


def test_the_figure_plots_every_series_in_milliseconds_against_T():
    rows = {"concat": _rows("concat", 1.0), "sum": _rows("sum", 3.0)}
    fig, axes = times_figure(rows, VERSIONS, h=4)
    assert len(axes) == 2 and not layout_problems(_drawn(fig))
    for ax, (form, scale) in zip(axes, (("concat", 1.0), ("sum", 3.0)), strict=True):
        assert ax.get_xscale() == ax.get_yscale() == "log" and form in ax.get_title()
        assert [line.get_label() for line in ax.lines] == [label for _, label, *_ in SERIES]
        for i, line in enumerate(ax.lines):
            assert list(line.get_xdata()) == [4, 64]
            np.testing.assert_allclose(line.get_ydata(), [scale * (i + 1) * T * 1e-3 for T in (4, 64)])
    assert axes[0].get_ylim() == axes[1].get_ylim()  # one scale for both panels
    assert fig.get_supxlabel() == versions_line(VERSIONS)


def test_one_form_makes_one_panel():
    fig, axes = times_figure({"concat": _rows("concat", 1.0)}, VERSIONS, h=4)
    assert len(axes) == 1 and len(axes[0].lines) == len(SERIES) and not layout_problems(_drawn(fig))


def test_bad_input_is_refused_with_the_rule():
    with pytest.raises(ValueError, match="at least one row"):
        product_counts([])
    with pytest.raises(TypeError, match="every row of table must be a Mapping"):
        product_counts(["concat"])
    with pytest.raises(ValueError, match="optimised HLO program"):
        dot_lines(programs({("concat", "loop", 1, 4): 1})["concat", "loop", 1, 4][0])  # the lowered text
    with pytest.raises(TypeError, match="text must be a str"):
        dot_lines(None)
    with pytest.raises(TypeError, match="versions must be a Mapping"):
        versions_line("0.10.2")
    with pytest.raises(ValueError, match="rows at h = 16"):
        times_figure({"concat": _rows("concat", 1.0)}, VERSIONS, h=16)
    with pytest.raises(TypeError, match="h must be an integer"):
        times_figure({"concat": _rows("concat", 1.0)}, VERSIONS, h="4")
    with pytest.raises(ValueError, match="at least one form"):
        times_figure({}, VERSIONS, h=4)
