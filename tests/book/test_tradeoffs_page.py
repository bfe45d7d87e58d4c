"""The trade-offs chapter shows the paper's figures as geron_lib.studies.paper stores them, and the stored
grid's numbers as the grid holds them: every row of the tables the stored page prints is recomputed here
from the JSON (paired intervals with scipy.stats, not with the library's function), every figure of the
trained miniatures is drawn, and the recipe table lists every item of ALBERT's recipe."""

import re

import numpy as np
import pytest
from book_site.pages import notebook
from scipy import stats

from geron_lib.studies import tradeoffs as tx
from geron_lib.studies.paper import RECIPE, TABLE_1, TABLE_2, TABLE_3_SCORES, TABLE_4_SCORES

PAGE = "book/05_albert_tradeoffs"
NAMES = {"none": "not shared", "all": "all shared", "attention": "attention shared", "ffn": "FFN shared"}
PAPER_E = dict(zip((8, 16, 32, 64), (64, 128, 256, 768), strict=True))
GRID = tx.load_stored()
SETUP = tx.Setup()


@pytest.fixture(scope="module")
def table_rows():
    """Every Markdown table row the stored notebook prints, as a list of its cells."""
    rows = []
    for cell in notebook(PAGE)["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/markdown", ""))
            rows += [[c.strip() for c in line.strip().strip("|").split("|")]
                     for line in text.splitlines() if re.match(r"^\|[^-]", line)]
    return rows


def test_table_2_as_the_paper_prints_it(table_rows):
    for row, sizes in zip(TABLE_2, TABLE_1, strict=True):
        shown = [r for r in table_rows if r[0] == row.model]
        assert len(shown) == 1, f"{row.model}: {len(shown)} rows"
        assert shown[0][1:4] == [f"{sizes.millions}M", str(row.average), f"{row.speedup}x"]


def _values(measure, E, sharing):
    """{seed: value} read straight from the stored JSON."""
    if measure.startswith("accuracy:"):
        task = measure.split(":")[1]
        return {r["seed"]: r["accuracy"] for r in GRID["finetuning"]
                if (r["E"], r["sharing"], r["task"]) == (E, sharing, task)}
    return {r["seed"]: r[measure][-1] for r in GRID["runs"] if (r["E"], r["sharing"]) == (E, sharing)}


def _range(values, scale, digits):
    v = scale * np.array(list(values.values()))
    return f"{v.mean():.{digits}f} ({v.min():.{digits}f} to {v.max():.{digits}f})"


def _paper_avg(E, sharing):
    rows = [r for r in TABLE_3_SCORES + TABLE_4_SCORES
            if (r.config.E, r.config.sharing) == (PAPER_E[E], sharing)]
    return rows[0].average


def test_every_cell_with_loss_accuracies_and_the_paper_avg(table_rows):
    for E, sharing in SETUP.grid():
        shown = [r for r in table_rows if r[:2] == [str(E), NAMES[sharing]]]
        assert len(shown) == 1, (E, sharing)
        row = shown[0]
        assert row[3] == _range(_values("held_out_loss", E, sharing), 1, 3)
        assert row[4] == _range(_values("accuracy:order", E, sharing), 100, 1)
        assert row[5] == _range(_values("accuracy:section", E, sharing), 100, 1)
        assert row[6] == f"$E = {PAPER_E[E]}$: {_paper_avg(E, sharing)}"
    majority = [r for r in table_rows if r[:2] == ["", "majority class"]]
    assert len(majority) == 1
    tasks = GRID["tasks"]
    assert majority[0][4:6] == [f"{100 * tasks[t]['majority_accuracy']:.1f}" for t in ("order", "section")]


def _comparisons():
    H = SETUP.hidden_size
    cells = [("3", (E, s), (H, s)) for s in ("none", "all") for E in SETUP.embedding_sizes if E != H]
    cells += [("4", (E, m), (E, "none"))
              for E in SETUP.mode_embedding_sizes for m in ("all", "attention", "ffn")]
    return cells


def _interval_text(measure, cell, baseline, scale, digits):
    a, b = _values(measure, *cell), _values(measure, *baseline)
    seeds = sorted(a)
    x, y = np.array([a[s] for s in seeds]), np.array([b[s] for s in seeds])
    ci = stats.ttest_rel(x, y).confidence_interval(0.95)
    mean, low, high = (scale * v for v in ((x - y).mean(), ci.low, ci.high))
    text = f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"
    return text if (low > 0 or high < 0) else f"{text} not resolved"


def test_every_paired_comparison_with_its_interval(table_rows):
    for table, cell, baseline in _comparisons():
        key = [table, f"$E = {cell[0]}$, {NAMES[cell[1]]}", f"$E = {baseline[0]}$, {NAMES[baseline[1]]}"]
        shown = [r for r in table_rows if r[:3] == key]
        assert len(shown) == 1, key
        row = shown[0]
        assert row[3] == _interval_text("held_out_loss", cell, baseline, 1, 3)
        assert row[4] == _interval_text("accuracy:order", cell, baseline, 100, 1)
        assert row[5] == _interval_text("accuracy:section", cell, baseline, 100, 1)
        paper = _paper_avg(*cell) - _paper_avg(*baseline)
        if table == "4":  # Table 4's own rows (two cells repeat Table 3's models with another Avg)
            rows = {(r.config.E, r.config.sharing): r.average for r in TABLE_4_SCORES}
            paper = rows[(PAPER_E[cell[0]], cell[1])] - rows[(PAPER_E[baseline[0]], baseline[1])]
        assert row[6] == f"{paper:+.1f}"


def test_recipe_table_lists_every_item_of_the_paper(table_rows):
    for item, text, section in RECIPE:
        shown = [r for r in table_rows if r[0] == item]
        assert len(shown) == 1, item
        assert shown[0][1] == f"{text} ({section})" and shown[0][3] in ("yes", "no")
    assert [r[3] for r in table_rows if r[0] == "dropout"] == ["yes"]


@pytest.mark.parametrize("name", ["fig-tradeoffs-curves", "fig-tradeoffs-long", "fig-tradeoffs-loss",
                                  "fig-tradeoffs-figure1",
                                  "fig-tradeoffs-spectrum"])
def test_figures_of_the_trained_grid_are_drawn(name):
    cells = [c for c in notebook(PAGE)["cells"]
             if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == name]
    assert len(cells) == 1
    data = [o.get("data", {}) for o in cells[0].get("outputs", [])]
    assert any("image/png" in d or "image/svg+xml" in d for d in data)


# The chapter's prose (and chapters 1 and 2's pointers to it) states these findings about the stored grid;
# each must hold for the stored numbers, or the sentence must change.
from geron_lib.studies.paired import paired_interval  # noqa: E402
from geron_lib.studies.tradeoffs import results as tr  # noqa: E402

BEST = (SETUP.hidden_size, "none")


def test_claims_about_how_far_the_grid_learned():
    best = list(_values("held_out_loss", *BEST).values())
    assert GRID["data"]["unigram_loss"] - max(best) > 1.0   # "every seed beyond the 1 nat"
    late = tr.late_improvement(GRID, BEST)
    assert np.mean(list(late.values())) > max(best) - min(best)   # "had not flattened"
    for c in SETUP.grid():  # figure alt text: "one seed of each [E = 8] never leaving it", the rest fall
        if c[0] == 8:
            assert any(_values("held_out_loss", *c)[s] > GRID["data"]["unigram_loss"] for s in SETUP.seeds)
        else:
            assert min(tr.late_improvement(GRID, c).values()) > 0
    long = tx.load_stored(tx.LONG_RUN)
    (run,) = long["runs"]
    loss = np.array(run["held_out_loss"])
    drop = int(np.argmax(-np.diff(loss)))
    steps = GRID["data"]["steps_per_run"]   # "inside the span where the longer run fell fastest"
    assert run["held_out_step"][drop] < steps < run["held_out_step"][drop + 1]
    grid_drop = -np.diff(np.mean([r["held_out_loss"] for r in GRID["runs"]
                                  if (r["E"], r["sharing"]) == BEST], axis=0))
    assert grid_drop[1:].max() < loss[drop] - loss[drop + 1]   # "no fall as steep"
    assert long["data"]["unigram_loss"] - loss[-1] > 1.0


def test_claims_about_tables_3_and_4():
    found = {(c.table, c.measure, c.cell): c.interval for c in tr.comparisons(GRID)}
    for sharing in ("none", "all"):
        for E in SETUP.embedding_sizes[:-1]:
            i = found[("3", "held_out_loss", (E, sharing))]
            assert i.resolved and i.mean > 0                 # "narrowing E raised the held-out loss"
    for cell in ((16, "all"), (16, "attention")):            # "two are resolved, both at E = 16"
        assert found[("4", "held_out_loss", cell)].resolved and found[("4", "held_out_loss", cell)].mean > 0
    for cell in ((64, "all"), (64, "attention"), (64, "ffn"), (16, "ffn")):
        assert not found[("4", "held_out_loss", cell)].resolved   # "not resolved at this size"
    all64 = found[("4", "held_out_loss", (64, "all"))]           # "the largest mean cost"
    assert all64.mean == max(found[("4", "held_out_loss", c)].mean
                             for c in ((64, "all"), (64, "attention"), (64, "ffn")))
    assert not tr.compare(GRID, "held_out_loss", (16, "attention"), (16, "ffn")).resolved  # "does not order"
    resolved = [key for key, i in found.items() if key[1] != "held_out_loss" and i.resolved]
    assert resolved == [("4", "accuracy:section", (16, "attention"))]   # "one is resolved"
    assert found[resolved[0]].mean > 0                       # "points above"
    assert len(resolved) <= 0.05 * len([k for k in found if k[1] != "held_out_loss"])  # "by chance alone"
    majority = GRID["tasks"]["section"]["majority_accuracy"]
    order_majority = GRID["tasks"]["order"]["majority_accuracy"]
    order = [np.mean(list(_values("accuracy:order", *c).values())) for c in SETUP.grid()]
    assert max(abs(v - order_majority) for v in order) < 0.05   # "around the majority class"
    section = [np.mean(list(_values("accuracy:section", *c).values())) for c in SETUP.grid()]
    assert max(section) > majority                           # "the models beat the majority class"


def test_claims_about_figure_1_and_the_rank():
    for r in GRID["runs"]:
        d = r["movement_distance"]
        if (r["E"], r["sharing"]) == (64, "all"):
            assert all(np.diff(d) < 0)                       # "falls from each layer to the next"
        if (r["E"], r["sharing"]) == (64, "none"):
            assert d[1] < d[0] and d[-1] > d[-2]             # "dips ... and rises again at the last"
    for E in (64, 16):
        assert not tr.compare(GRID, "smoothness", (E, "all"), (E, "none")).resolved
    moved = tr.per_seed(GRID, "rows_moved", BEST)
    assert all(v == SETUP.vocab_size for v in moved.values())   # "leaves nothing out"
    def gap(key):
        a, b = tr.per_seed(GRID, key, BEST), tr.per_seed(GRID, "effective_rank_hidden_centred", BEST)
        return paired_interval([a[s] for s in SETUP.seeds], [b[s] for s in SETUP.seeds])
    moved_gap = gap("effective_rank_moved_centred")
    table = np.mean(list(tr.per_seed(GRID, "effective_rank_centred", BEST).values()))
    hidden = np.mean(list(tr.per_seed(GRID, "effective_rank_hidden_centred", BEST).values()))
    assert table > hidden                                    # chapter 1: "but the table itself ..."
    assert moved_gap.resolved and moved_gap.mean > 0         # "more directions ... resolved"
    text = gap("effective_rank_in_text_centred")
    assert text.resolved and text.mean < 0                   # "fewer ... resolved"
    assert tr.compare(GRID, "held_out_loss", (16, "none"), BEST).mean > 0   # chapter 1: "raised"
