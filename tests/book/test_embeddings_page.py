"""Chapter 1's claims about the output side, the shipped miniature's token table and the paper's Table 3,
recomputed: each value its prose shows (the page's own cells, run here) against an independent computation
from the layer shapes, the singular values or the paper's figures, not through the functions the page
calls."""

from fractions import Fraction

import numpy as np
import pytest
from book_site.pages import notebook
from page_cells import run_cells

from geron_lib import PRESETS, EncoderConfig, count_parameters
from geron_lib.costs.flops import count_flops
from geron_lib.model.mlm import MaskedLM
from geron_lib.studies import context_grid as cg
from geron_lib.studies.context_grid import Grid
from geron_lib.studies.paper import PLAIN, TABLE_1, TABLE_3, TABLE_3_SCORES, TABLE_4_SCORES, Accounting
from geron_lib.studies.trained_attention import CELL, SEED, load_miniature

PAGE = "book/01_factorised_embeddings"
ALBERT = PRESETS["albert-base-v2"]
COUNTS = "222f9fdf"  # the page's ALBERT base: V, H, E and albert_base


def spectrum(table) -> np.ndarray:
    return np.linalg.svd(np.asarray(table, dtype=np.float64), compute_uv=False)


def effective_rank(s: np.ndarray) -> float:
    p = s / s.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def energy(s: np.ndarray) -> np.ndarray:
    """energy[k - 1]: the share of the squared singular values in the first k."""
    return np.cumsum(s**2) / (s**2).sum()


@pytest.fixture(scope="module")
def miniature():
    return run_cells(PAGE, "trained-table-spectra", "trained-table-numbers")


@pytest.fixture(scope="module")
def output_side():
    return run_cells(PAGE, COUNTS, "output-side-count", "output-side-numbers")


@pytest.fixture(scope="module")
def table_3():
    return run_cells(PAGE, COUNTS, "92423745")


def test_the_tables_are_the_shipped_miniatures_and_the_start_its_run_drew(miniature):
    encoder, _ = load_miniature()
    assert encoder.config.E == encoder.config.hidden_size and not encoder.config.has_embedding_projection
    assert np.array_equal(miniature["trained"], encoder.embeddings["word"])
    # "the table the same seed drew before training": the grid's runner starts from MaskedLM(config, seed)
    start = MaskedLM(encoder.config, seed=SEED, dtype=encoder.dtype).encoder.embeddings["word"]
    assert np.array_equal(miniature["mini_tables"]["before training"], start)
    assert not np.allclose(miniature["trained"], start)
    # and the context grid's run of that cell and seed, trained from the same start, stored its spectrum
    # (to 3 decimals)
    E, sharing = CELL
    runs = [r for r in cg.load_stored()["runs"]
            if (r["E"], r["sharing"], r["H"], r["seed"]) == (E, sharing, encoder.config.hidden_size, SEED)]
    assert runs
    for run in runs:
        assert np.allclose(run["singular_values_initial"], spectrum(start), rtol=0, atol=5.01e-4)


def test_the_ranks_shown_are_the_tables_own(miniature):
    trained = np.asarray(miniature["trained"], dtype=np.float64)
    tables = {"": trained, "_centred": trained - trained.mean(axis=0),
              "_start": miniature["mini_tables"]["before training"]}
    E = miniature["mini_E_narrow"]
    for suffix, table in tables.items():
        s = spectrum(table)
        assert miniature[f"mini_r{suffix}"] == pytest.approx(effective_rank(s), rel=1e-6)
        assert miniature[f"mini_k90{suffix}"] == int(np.argmax(energy(s) >= 0.9 - 1e-12)) + 1
        if suffix:
            kept = miniature[f"mini_kept{suffix}"]
            assert kept == pytest.approx(100 * energy(s)[E - 1], rel=1e-6)
    assert (miniature["mini_V"], miniature["mini_H"]) == trained.shape
    assert miniature["mini_E_narrow"] == min(Grid().embedding_sizes) < miniature["mini_H"]


def test_the_random_start_is_nearly_flat(miniature):
    # "nearly flat ... as a Gaussian table with many more rows than columns is"
    V, H = miniature["mini_V"], miniature["mini_H"]
    assert V > 10 * H
    assert miniature["mini_r_start"] > 0.99 * H


def test_the_verdicts_follow_the_values(miniature):
    assert miniature["mini_concentrated"] == (miniature["mini_r_centred"] < miniature["mini_r_start"])
    assert miniature["mini_spread"] == (miniature["mini_k90_centred"] > miniature["mini_H"] / 2)


def test_the_best_shifted_table_of_width_E_centres_first(miniature):
    # "the best one of width E is the mean row plus the best rank-E table of the rest": no other shift
    # leaves a smaller remainder
    trained = np.asarray(miniature["trained"], dtype=np.float64)
    E = miniature["mini_E_narrow"]

    def remainder(shift):
        return np.sqrt((spectrum(trained - shift)[E:] ** 2).sum())

    mean = trained.mean(axis=0)
    rng = np.random.default_rng(0)
    others = [mean + rng.normal(0, scale, mean.shape) for scale in (1e-3, 1e-2, 1e-1)] + [0 * mean]
    assert all(remainder(mean) < remainder(shift) for shift in others)


def test_the_head_counts_are_the_layer_shapes(output_side):
    V, E, H = ALBERT.vocab_size, ALBERT.E, ALBERT.hidden_size
    # a dense map H -> E with its bias, a layer norm over E, an output bias of V; the decoder is Emb itself
    assert output_side["head_E"] == H * E + E + 2 * E + V
    assert output_side["head_H"] == H * H + H + 2 * H + V
    small = EncoderConfig(vocab_size=50, embedding_size=4, hidden_size=12, num_attention_heads=3,
                          intermediate_size=20, max_position_embeddings=16, model_type="albert")
    head = MaskedLM(small, seed=0).head
    assert sum(w.size for w in head.values()) == count_parameters(small, mlm_head=True).mlm_head
    assert (small.vocab_size, small.E) not in {w.shape for w in head.values()}


def test_the_head_flops_fall_to_E_over_H(output_side):
    V, E, H = ALBERT.vocab_size, ALBERT.E, ALBERT.hidden_size
    T, n = output_side["T"], output_side["n_mask"]
    assert n == round(0.15 * T)
    assert output_side["head_flops_E"] == 2 * n * E * (H + V)
    assert output_side["head_flops_H"] == 2 * n * H * (H + V)
    assert Fraction(output_side["head_flops_E"], output_side["head_flops_H"]) == Fraction(E, H)
    assert output_side["head_flops_ratio"] == pytest.approx(E / H, rel=1e-12)
    assert output_side["projection_flops"] == 2 * T * E * H
    # net: what the output saves less what the input adds, the layers being the same
    assert output_side["net_saved"] == 2 * n * (H - E) * (H + V) - 2 * T * E * H
    assert (output_side["net_verdict"] == "saves") == (output_side["net_saved"] > 0)
    assert output_side["net_share"] == pytest.approx(
        100 * abs(output_side["net_saved"]) / output_side["total_flops_H"])
    # "the layers, not the table, hold the compute"
    flops = count_flops(ALBERT.replace(embedding_size=None), T, mlm_head=True, masked=n)
    assert flops.total == output_side["total_flops_H"]
    assert flops.attention + flops.ffn > 0.9 * flops.total


def _rows_shown() -> dict[str, list[str]]:
    """The Table 3 rows the stored page prints, by their E."""
    cell = next(c for c in notebook(PAGE)["cells"] if c.get("id") == "table3-table")
    text = "".join(cell["outputs"][0]["data"]["text/markdown"])
    rows = [[x.strip() for x in line.strip().strip("|").split("|")] for line in text.splitlines()[2:]]
    return {row[0]: row[1:] for row in rows}


def test_the_table_sets_the_papers_figures_beside_exact_counts():
    rows = {(r.config.sharing, r.config.E): r for r in TABLE_3}
    scores = {(r.config.sharing, r.config.E): r.average for r in TABLE_3_SCORES}
    shown = _rows_shown()
    assert sorted(map(int, shown)) == sorted({E for _, E in rows})
    for E, cells in shown.items():
        none, full = rows["none", int(E)], rows["all", int(E)]
        assert cells == [f"{none.millions}M", f"{PLAIN.count(none.config):,}", str(scores["none", int(E)]),
                         f"{full.millions}M", f"{PLAIN.count(full.config):,}",
                         f"{Accounting(pooler=True).count(full.config):,}", str(scores["all", int(E)])]


def test_what_the_page_reads_in_table_3(table_3):
    scores = {(r.config.sharing, r.config.E): r.average for r in TABLE_3_SCORES}
    widths = sorted({E for _, E in scores})
    not_shared = [scores["none", E] for E in widths]
    all_shared = {E: scores["all", E] for E in widths}
    assert table_3["t3_widths"] == widths and table_3["t3_avg"] == scores
    assert table_3["t3_ns_rises"] == all(a < b for a, b in zip(not_shared, not_shared[1:], strict=False))
    assert table_3["t3_ns_gain"] == pytest.approx(not_shared[-1] - not_shared[0])
    best = max(all_shared.values())
    assert [table_3["t3_all_best"]] == [E for E, v in all_shared.items() if v == best]
    assert table_3["t3_all_margin"] == pytest.approx(best - sorted(all_shared.values())[-2])
    # "the paper uses E = 128 from then on (its Table 1's ALBERT models all have it)"
    assert {r.config.E for r in TABLE_1 if "ALBERT" in r.model} == {table_3["t3_paper_E"]}
    # the same model in Table 4, another Avg
    table_4 = next(r.average for r in TABLE_4_SCORES if (r.config.sharing, r.config.E) == ("none", 128))
    assert (table_3["t3_table_3_avg"], table_3["t3_table_4_avg"]) == (scores["none", 128], table_4)
    # each column counted its way (plain; with the pooler) lies within t3_worst of its figure, which is
    # below half a million: the nearest million is the printed one
    column = {"none": PLAIN, "all": Accounting(pooler=True)}
    worst = max(abs(column[r.config.sharing].count(r.config) - r.millions * 10**6) for r in TABLE_3)
    assert table_3["t3_worst"] == worst / 10**6 < 0.5
    assert (table_3["t3_smallest"], table_3["t3_largest"]) == (min(r.millions for r in TABLE_3),
                                                               max(r.millions for r in TABLE_3))
