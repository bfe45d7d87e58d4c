"""Appendix A4's claims, recomputed: each value its prose shows (the page's own cells, run here) against the
fact it states."""

import re

import nbformat
import numpy as np
import pytest
from book_site.pages import ROOT
from page_cells import run_cells

PAGE = "book/A4_training_by_hand"


def test_the_optimiser_is_bias_corrected_unlike_berts():
    # BERT's AdamWeightDecayOptimizer has no bias correction, so its first step on a unit gradient is
    # (1 - beta_1) / sqrt(1 - beta_2) = 3.16 times the rate; the library's, corrected, is 1
    shown = run_cells(PAGE, "a4-adamw")
    assert shown["a4_first_step"] == pytest.approx(1.0, rel=1e-6)
    assert shown["a4_uncorrected_step"] == pytest.approx(0.1 / np.sqrt(0.001))


def test_the_pages_exercises_carry_its_own_labels():
    # an exercise's label names the page it is on
    notebook = nbformat.read(ROOT / f"{PAGE}.ipynb", as_version=4)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    labels = re.findall(r"^:label: (\S+)", text, re.M)
    assert "ex-hand-bk" in labels and all(label.startswith("ex-hand-") for label in labels)


def test_the_graph_is_drawn_for_chapter_4s_model():
    shown = run_cells(PAGE, "a4-graph")
    config = shown["mx"].model_config(shown["graph_setup"], shown["graph_vocab"])
    assert config.attention == "concat"
    labels = {t.get_gid(): t.get_text() for t in shown["fig"].axes[0].texts}
    assert labels["detail-W_1"] == f"(B, T, {config.intermediate_size})"
